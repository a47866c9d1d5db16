//===- Tcgen05AllocLaneGuard.cpp - TMEM allocation under a guard that splits a warp -===//
//
// tcgen05.alloc, tcgen05.dealloc and tcgen05.relinquish_alloc_permit are `.sync.aligned`:
// every lane of the warp executes the same instruction (PTX ISA, "tcgen05.alloc"). Under a
// `lane_id == 0` or elect.sync guard the behaviour is undefined: the allocation may never
// be written to its shared-memory slot, or the columns never return (Step 7's list).
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void Tcgen05AllocLaneGuard(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  for (const EventSite &S : eventSites(P)) {
    const Event &E = *S.E;
    if ((E.Kind != EventKind::Alloc && E.Kind != EventKind::Dealloc &&
         E.Kind != EventKind::Relinquish) ||
        Seen[S.Index])
      continue;
    Seen[S.Index] = true;
    Coverage C = coverage(E.Threads, WarpSize);
    if (!C.Unknown.empty()) {
      Ctx.report(Severity::Remark,
                 E.Opcode + " is warp-wide, but the threads that execute it are unknown (" +
                     C.Unknown + "), so whether whole warps execute it was not checked",
                 E);
      continue;
    }
    if (C.Partial.empty())
      continue;
    std::string What = E.Kind == EventKind::Alloc     ? "the TMEM allocation"
                       : E.Kind == EventKind::Dealloc ? "the TMEM deallocation"
                                                      : "giving up the allocation permit";
    Finding &F =
        Ctx.report(Severity::Error,
                   E.Opcode + " is warp-wide (.sync.aligned) but only " + C.Partial +
                       " execute it, so " + What +
                       " is undefined behaviour: the other lanes never take part and the warp "
                       "may hang or leave the columns in an unknown state",
                   E);
    if (std::optional<SourceRef> Guard = threadGuard(P, E))
      note(F, "the guard that splits the warp is here", *Guard);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
