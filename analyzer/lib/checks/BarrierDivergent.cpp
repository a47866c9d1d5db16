//===- BarrierDivergent.cpp - a CTA-wide barrier that only some threads reach -----===//
//
// `bar.sync a` without a thread count (and `barrier.sync a`) waits for every thread of the
// CTA (PTX ISA, "bar, barrier"), and the aligned form also requires that they all execute
// the same instruction. Inside a role's branch the other roles never reach it: the barrier
// hangs, or completes with a different `bar.sync a` elsewhere and pairs unrelated points of
// the program (the __syncthreads() inside a consumer branch of Step 7's debugging list).
// The form without .aligned may be completed by different instructions, so it is only an
// error when some thread of the CTA reaches none of them.
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

void BarrierDivergent(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);
  NamedBarrierUses Uses = namedBarrierUses(P, Sites);
  unsigned Block = P.Launch.threads();

  for (const UnresolvedBarrier &U : Uses.Unresolved) {
    const Event &E = *U.Site->E;
    if (!E.Named.Threads.absent())
      continue; // counted barriers belong to named-barrier-count
    Ctx.report(Severity::Remark,
               E.Opcode + " waits for every thread of the CTA, but " + U.Reason +
                   ", so whether all threads reach it was not checked",
               E);
  }

  // Threads that reach each id at some barrier of the whole CTA without .aligned: such
  // barriers may pair different instructions (Triton's partitions each sync on
  // `barrier.sync 1` at their own place), so they only need every thread to come.
  std::map<uint64_t, llvm::BitVector> Unaligned;
  for (const NamedBarrierUse &U : Uses.Uses) {
    if (U.Count || alignedGranule(*U.Site->E))
      continue;
    llvm::BitVector &R = Unaligned[U.Id];
    R.resize(Block);
    llvm::BitVector T = U.Threads;
    T.resize(Block);
    R |= T;
  }

  for (const NamedBarrierUse &U : Uses.Uses) {
    if (U.Count)
      continue;
    llvm::BitVector Reaching = U.Threads;
    Reaching.resize(Block);
    if (Reaching.count() == Block)
      continue;
    const Event &E = *U.Site->E;
    if (!alignedGranule(E) && Unaligned[U.Id].count() == Block)
      continue;
    llvm::BitVector Missing(Block, true);
    Missing.reset(Reaching);
    std::string Who = describeThreads(Reaching);
    if (U.Site->R)
      Who = U.Site->R->Name + " (" + describeThreads(Reaching, false) + ", " +
            std::to_string(Reaching.count()) + " threads)";
    Finding &F = Ctx.report(
        Severity::Error,
        E.Opcode + " " + std::to_string(U.Id) + " waits for all " + std::to_string(Block) +
            " threads of the CTA but only " + Who + " reaches it; " + describeThreads(Missing) +
            " never arrive here, so the barrier hangs or completes with a different barrier " +
            std::to_string(U.Id) + " elsewhere",
        E);
    // Where the missing threads meet barrier U.Id instead, if anywhere.
    for (const NamedBarrierUse &Other : Uses.Uses) {
      if (Other.Site->E == &E || Other.Id != U.Id || Other.Count)
        continue;
      llvm::BitVector Common = Other.Threads;
      Common.resize(Block);
      Common &= Missing;
      if (Common.any())
        note(F, describeThreads(Common) + " reach barrier " + std::to_string(U.Id) + " here",
             Other.Site->E->Where);
    }
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
