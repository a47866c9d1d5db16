//===- NamedBarrierCount.cpp - bar.sync a, N where N threads never come -----------===//
//
// `bar.sync a, b` / `bar.arrive a, b` complete barrier a once b threads have arrived; b is a
// multiple of the warp size, at most the CTA's threads (PTX ISA, "bar, barrier"). When fewer
// threads than b ever use id a, the barrier never completes and every thread waiting on it
// hangs (a warpgroup_sync(10) written for 256 threads that only one warpgroup reaches).
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void NamedBarrierCount(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);
  NamedBarrierUses Uses = namedBarrierUses(P, Sites);
  unsigned Block = P.Launch.threads();

  for (const UnresolvedBarrier &U : Uses.Unresolved) {
    const Event &E = *U.Site->E;
    if (E.Named.Threads.absent())
      continue; // barriers of the whole CTA belong to barrier-divergent
    Ctx.report(Severity::Remark,
               E.Opcode + " counts threads, but " + U.Reason +
                   ", so its count was not compared with the threads that reach it",
               E);
  }

  // Every thread that ever uses an id, whatever count it passes.
  std::map<uint64_t, llvm::BitVector> Reaching;
  for (const NamedBarrierUse &U : Uses.Uses) {
    llvm::BitVector &R = Reaching[U.Id];
    R.resize(Block);
    llvm::BitVector T = U.Threads;
    T.resize(Block);
    R |= T;
  }

  // One finding per group of instructions and count (an unrolled epilogue repeats one
  // bar.sync; `bar.sync %tid.x / 128 + 1, 256` is one instruction for several ids).
  std::map<std::pair<uint64_t, uint64_t>, std::vector<const Event *>> ById;
  for (const NamedBarrierUse &U : Uses.Uses)
    if (U.Count)
      ById[{U.Id, *U.Count}].push_back(U.Site->E);
  struct Group {
    std::vector<const Event *> Events; ///< by PTX line
    uint64_t Count;
    std::vector<uint64_t> Ids; ///< ids whose threads are too few (or all, for a bad count)
  };
  std::vector<Group> Groups;
  for (auto &Entry : ById) {
    // Named, not bound: the lambda below captures them (C++17).
    const uint64_t Id = Entry.first.first, N = Entry.first.second;
    std::vector<const Event *> &Events = Entry.second;
    bool BadCount = N == 0 || N % WarpSize != 0 || N > Block;
    if (!BadCount && Reaching[Id].count() >= N)
      continue;
    llvm::sort(Events,
               [](const Event *A, const Event *B) { return A->Where.PtxLine < B->Where.PtxLine; });
    Events.erase(std::unique(Events.begin(), Events.end()), Events.end());
    auto Same =
        llvm::find_if(Groups, [&](const Group &G) { return G.Count == N && G.Events == Events; });
    if (Same == Groups.end())
      Groups.push_back(Group{Events, N, {Id}});
    else
      Same->Ids.push_back(Id);
  }

  for (const Group &G : Groups) {
    const Event &E = *G.Events.front();
    uint64_t N = G.Count;
    std::string More;
    if (G.Events.size() > 1)
      More = " (as do " + std::to_string(G.Events.size() - 1) + " more like it)";
    std::string Bar = E.Opcode + " " + P.exprString(E.Named.Id.E) + ", " + std::to_string(N);
    if (N == 0 || N % WarpSize != 0 || N > Block) {
      Ctx.report(Severity::Error,
                 Bar + More + ": the thread count must be a non-zero multiple of " +
                     std::to_string(WarpSize) + " up to the CTA's " + std::to_string(Block) +
                     " threads, so the barrier's behaviour is undefined",
                 E);
      continue;
    }
    std::string Who;
    for (uint64_t Id : G.Ids)
      Who += (Who.empty() ? "" : "; ") + ("barrier " + std::to_string(Id) + " is used only by " +
                                          describeThreads(Reaching[Id]));
    Finding &F = Ctx.report(Severity::Error,
                            Bar + " waits for " + std::to_string(N) + " threads" + More + ", but " +
                                Who + ", so the barrier never completes and they hang",
                            E);
    if (std::optional<SourceRef> From = operandSource(P, E, models::OperandRole::ThreadCount))
      note(F, "the thread count " + std::to_string(N) + " is set here", *From);
    for (const NamedBarrierUse &Other : Uses.Uses)
      if (llvm::is_contained(G.Ids, Other.Id) && (!Other.Count || *Other.Count != N))
        note(F,
             describeThreads(Other.Threads) + " use barrier " + std::to_string(Other.Id) +
                 (Other.Count ? " with count " + std::to_string(*Other.Count)
                              : std::string(" for the whole CTA")),
             Other.Site->E->Where);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
