//===- Tcgen05CommitMultiThread.cpp - tcgen05.commit by more than one lane ---------===//
//
// tcgen05.commit makes the mbarrier track the completion of the async tcgen05 operations the
// *executing thread* issued before it (PTX ISA, tcgen05.commit). MMAs are issued by one
// elected lane; a commit from any other lane of the warp tracks nothing and arrives without
// waiting for them, so the barrier's phase completes before the MMAs have read their operands
// or written the accumulator. One committing thread per warp is the shape to use. The
// exception: a barrier that counts an arrival from every committing thread and gets no other
// arrivals (init 32 for a whole warp's commit) cannot complete a phase without the lane that
// tracks the MMAs; the other lanes' arrivals can still land after the CTA left, which
// `wsv verify` decides.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// Threads per warp that run the event: those always in the set, and those in it only under
/// a CTA-uniform condition.
struct PerWarp {
  std::map<unsigned, unsigned> Always, Maybe;
};

PerWarp countPerWarp(const ThreadSet &T) {
  PerWarp Out;
  const llvm::BitVector &M = T.members();
  for (int Tid = M.find_first(); Tid >= 0; Tid = M.find_next(Tid))
    ++Out.Always[static_cast<unsigned>(Tid) / WarpSize];
  for (const ThreadSet::ElectedGroup &G : T.elected()) {
    for (unsigned W : G.Warps) {
      // An excluded group is the warp's candidates but its leader.
      unsigned N = 1;
      if (G.Excluded) {
        N = 0;
        for (unsigned L = 0; L < WarpSize; ++L)
          if (W * WarpSize + L < G.Candidates.size() && G.Candidates.test(W * WarpSize + L))
            ++N;
        N = N ? N - 1 : 0;
      }
      (G.Condition ? Out.Maybe : Out.Always)[W] += N;
    }
  }
  for (const ThreadSet::ConditionalGroup &G : T.conditional())
    for (int Tid = G.Threads.find_first(); Tid >= 0; Tid = G.Threads.find_next(Tid))
      ++Out.Maybe[static_cast<unsigned>(Tid) / WarpSize];
  return Out;
}

/// Whether every phase of E's barrier needs an arrival from each thread that runs E: its init
/// counts are at least that many threads, and nothing else arrives on it.
bool everyCommitCounts(const Protocol &P, const Event &E) {
  std::optional<unsigned> Threads = E.Threads.count();
  if (!Threads || !E.Barrier.resolved())
    return false;
  const BarrierArray &B = P.Barriers[E.Barrier.Array];
  if (B.InitCounts.empty())
    return false;
  for (const ProtocolValue &Count : B.InitCounts)
    if (!Count.constant() || *Count.constant() < *Threads)
      return false;
  // Anything else that changes a barrier (arrivals, tx counts, copies' complete_tx, other
  // commits) on this array, or on one that is not resolved, may fill a phase without it.
  for (const Event &O : P.Events) {
    bool Changes = O.Barrier.present() && O.Kind != EventKind::Wait &&
                   O.Kind != EventKind::Probe && O.Kind != EventKind::Init &&
                   O.Kind != EventKind::Inval;
    if (&O != &E && Changes && (!O.Barrier.resolved() || O.Barrier.Array == E.Barrier.Array))
      return false;
  }
  return true;
}

} // namespace

void wsv::analyzer::checks::Tcgen05CommitMultiThread(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  StageOrder Order(P);
  for (const Event &E : P.Events) {
    if (E.Kind != EventKind::MmaCommit)
      continue;
    if (E.Threads.isUnknown()) {
      Ctx.report(Severity::Remark,
                              "the threads that run this tcgen05.commit are unknown (" +
                                  E.Threads.reason() +
                                  "), so whether one lane per warp commits was not checked",
                              E);
      continue;
    }
    if (everyCommitCounts(P, E))
      continue;
    PerWarp Counts = countPerWarp(E.Threads);
    std::set<unsigned> Warps;
    for (const auto &[Warp, N] : Counts.Always)
      Warps.insert(Warp);
    for (const auto &[Warp, N] : Counts.Maybe)
      Warps.insert(Warp);
    for (unsigned Warp : Warps) {
      unsigned N = Counts.Always[Warp];
      unsigned Total = N + Counts.Maybe[Warp];
      if (Total <= 1)
        continue;
      bool Must = N > 1;
      std::string Msg;
      llvm::raw_string_ostream OS(Msg);
      OS << "tcgen05.commit on " << Order.name(E.Barrier) << " is executed by " << Total
         << " threads of warp " << Warp << " (" << E.Threads.str()
         << ") instead of one elected lane; a commit tracks only the MMAs of its own thread, so "
         << Total - 1 << " of them arrive without waiting for the MMAs, and "
         << Order.name(E.Barrier)
         << " completes while the MMAs may still read their operands or write the accumulator";
      Finding &F = Ctx.report(Must ? Severity::Error : Severity::Warning, Msg, E);
      // Point at the MMAs this commit is meant to track: those of the same warp.
      for (const Event &M : P.Events)
        if (M.Kind == EventKind::Mma && overlaps(M.Threads, E.Threads)) {
          addNote(F, "the MMAs are issued by " + M.Threads.str(), M);
          break;
        }
      if (E.Barrier.resolved())
        for (unsigned Init : P.Barriers[E.Barrier.Array].InitEvents) {
          addNote(F, Order.name(E.Barrier) + " is initialized here", P.Events[Init]);
          break;
        }
      break;
    }
  }
}
