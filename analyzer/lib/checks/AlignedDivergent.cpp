//===- AlignedDivergent.cpp - .aligned collectives under a guard that splits a warp -===//
//
// `.sync.aligned` instructions (tcgen05.ld/st/wait, bar.sync, barrier.cluster.*.aligned)
// must be executed by every thread of the warp, and wgmma by every warp of the warpgroup,
// with the same operands; under a guard that only part of a warp (warpgroup) passes the
// behaviour is undefined (PTX ISA, "wgmma.mma_async", "tcgen05.ld", "bar, barrier").
// TMEM allocation and setmaxnreg have checks of their own (tcgen05-alloc-lane-guard,
// setmaxnreg-nonuniform) and are left to them. One finding per guard: the first aligned
// instruction under it, with the count of the others.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void AlignedDivergent(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);

  // Aligned instructions under one guard share a thread set: one finding for all of them.
  struct Group {
    const Event *First;
    llvm::BitVector Threads;
    unsigned Granule;
    std::string Partial;
    unsigned Others = 0;
    SourceRef Last;
  };
  std::vector<Group> Groups;

  for (const EventSite &S : Sites) {
    const Event &E = *S.E;
    if (Seen[S.Index])
      continue;
    Seen[S.Index] = true;
    unsigned Granule = alignedGranule(E);
    if (!Granule || E.Kind == EventKind::Alloc || E.Kind == EventKind::Dealloc ||
        E.Kind == EventKind::Relinquish || E.Kind == EventKind::Setmaxnreg)
      continue;
    Coverage C = coverage(E.Threads, Granule);
    if (!C.Unknown.empty()) {
      Ctx.report(Severity::Remark,
                 E.Opcode + " must be executed by whole " +
                     (Granule == WarpSize ? "warps" : "warpgroups") +
                     ", but the threads that execute it are unknown (" + C.Unknown +
                     "), so this was not checked",
                 E);
      continue;
    }
    if (C.Partial.empty())
      continue;
    llvm::BitVector Threads = possibleThreads(E.Threads);
    auto Same = llvm::find_if(
        Groups, [&](const Group &G) { return G.Granule == Granule && G.Threads == Threads; });
    if (Same != Groups.end()) {
      ++Same->Others;
      Same->Last = E.Where;
      continue;
    }
    Groups.push_back(Group{&E, Threads, Granule, C.Partial, 0, {}});
  }

  for (const Group &G : Groups) {
    const Event &E = *G.First;
    std::string Unit = G.Granule == WarpSize ? "warp" : "warpgroup";
    std::string More;
    if (G.Others)
      More = " (and " + std::to_string(G.Others) + " more aligned instruction" +
             (G.Others > 1 ? "s" : "") + " under the same guard)";
    Finding &F =
        Ctx.report(Severity::Error,
                   E.Opcode + " must be executed by every thread of the " + Unit +
                       " (.aligned), but only " + G.Partial + " execute it" + More +
                       ", so its result is undefined and the " + Unit + "'s other threads may hang",
                   E);
    if (std::optional<SourceRef> Guard = threadGuard(P, E))
      note(F, "the guard that splits the " + Unit + " is here", *Guard);
    if (G.Others)
      note(F, "the last aligned instruction under the same guard", G.Last);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
