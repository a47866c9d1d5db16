//===- SmemWarRelease.cpp - a stage released while reads of it may still run -------===//
//
// A consumer gives stage s back by arriving on empty[s]; once the phase completes, the
// producer's next TMA load overwrites A[s]. Every read of A[s] of the current phase must be
// finished by then:
//  - a read issued after the arrive (before the stage is acquired again) is plainly late;
//  - a wgmma read is finished once a `wgmma.wait_group N` ran after at least N later groups
//    were committed (PTX ISA: wait_group N waits for all but the N most recent groups);
//  - a tcgen05.mma read is finished only when a tcgen05.commit after it completed a barrier
//    that the releasing thread waited on (or the release itself is that commit, which this
//    check does not look at: it is the correct shape);
//  - an ld.shared by threads other than the arriving ones is finished for the arriving thread
//    only after a barrier that both take part in.
// A release that no refill ever waits for (the last phase of a ring) cannot race, which the
// check decides from the barrier traffic (BarrierTraffic.h) for sampled sizes: the phase the
// release belongs to against the phases the refills' waits need.
//
//===----------------------------------------------------------------------------------===//
#include "BarrierTraffic.h"
#include "StageOrder.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// Whether the wgmma read at step J is finished after the steps Between ran.
bool wgmmaDone(const StageOrder &Order, const Sequence &Seq,
               const std::vector<unsigned> &Between) {
  GroupRetirement Group(models::SyncKind::WgmmaCommitGroup, models::SyncKind::WgmmaWaitGroup);
  for (unsigned J : Between)
    if (Group.retiredBy(Order.event(Seq, J)))
      return true;
  return false;
}

/// Whether the tcgen05.mma read is finished: a commit after it completes a barrier that a
/// later wait of the releasing threads observes.
bool tcgen05Done(const StageOrder &Order, const Sequence &Seq,
                 const std::vector<unsigned> &Between, const Event &Release) {
  std::set<unsigned> Committed;
  for (unsigned J : Between) {
    const Event &E = Order.event(Seq, J);
    if (E.Kind == EventKind::MmaCommit && E.Barrier.resolved())
      Committed.insert(E.Barrier.Array);
    if (E.Kind == EventKind::Wait && E.Barrier.resolved() &&
        Committed.count(E.Barrier.Array) && overlaps(E.Threads, Release.Threads))
      return true;
  }
  return false;
}

/// Whether every warp that reads has a thread among the arriving ones.
bool arrivesPerWarp(const ThreadSet &Read, const ThreadSet &Release) {
  if (Read.isUnknown() || Release.isUnknown())
    return false;
  std::set<unsigned> Arriving;
  const llvm::BitVector &M = Release.members();
  for (int T = M.find_first(); T >= 0; T = M.find_next(T))
    Arriving.insert(static_cast<unsigned>(T) / WarpSize);
  for (const ThreadSet::ElectedGroup &G : Release.elected())
    if (!G.Excluded && !G.Condition)
      Arriving.insert(G.Warps.begin(), G.Warps.end());
  const llvm::BitVector &R = Read.members();
  for (int T = R.find_first(); T >= 0; T = R.find_next(T))
    if (!Arriving.count(static_cast<unsigned>(T) / WarpSize))
      return false;
  return true;
}

/// Whether the readers finished before the arrive: a barrier joins them with the arriving
/// threads, or a warp barrier joins each reading warp with its arriving lane.
bool syncedWith(const StageOrder &Order, const Sequence &Seq,
                const std::vector<unsigned> &Between, const Event &Read,
                const Event &Release) {
  for (unsigned J : Between) {
    const Event &E = Order.event(Seq, J);
    if (synchronizes(E, Read.Threads) && synchronizes(E, Release.Threads))
      return true;
    if (E.Kind == EventKind::WarpSync && coveredBy(Read.Threads, E.Threads) &&
        arrivesPerWarp(Read.Threads, Release.Threads))
      return true;
  }
  return false;
}

/// Whether some waiter needs the phase this release belongs to, in some sampled
/// expansion of the barrier traffic: the release is the j-th occurrence of its stream on the
/// slot, which completes phase j, and a waiter that needs n completions needs phases 0..n-1.
/// Where the traffic cannot be unrolled the release is taken as awaited.
bool awaited(const std::vector<traffic::Expansion> &Es, unsigned Release, SlotRef Empty) {
  for (const traffic::Expansion &E : Es) {
    if (!E.Unknown.empty())
      return true;
    const traffic::SlotTraffic *S = E.find(0, Empty.Array, static_cast<unsigned>(Empty.Slot));
    if (!S)
      continue;
    if (!S->Unknown.empty() || !S->WaitUnknown.empty())
      return true;
    uint64_t Needed = 0;
    for (const traffic::WaiterStream &W : S->Waiters)
      Needed = std::max(Needed, traffic::needsOf(W).last());
    for (const traffic::ArriverStream &A : S->Arrivers)
      for (size_t J = 0; J < A.Occurrences.size(); ++J)
        if (llvm::is_contained(A.Occurrences[J].Events, Release) && J < Needed)
          return true;
  }
  return false;
}

} // namespace

void wsv::analyzer::checks::SmemWarRelease(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  StageOrder Order(P);
  std::set<unsigned> Reported;
  // Unrolled only for a release after the loops (the last phases of a ring).
  std::optional<std::vector<traffic::Expansion>> Traffic;
  for (const Sequence &Seq : Order.sequences()) {
    for (unsigned A = 0; A < Seq.Steps.size(); ++A) {
      const Event &Release = Order.event(Seq, A);
      if (Release.Kind != EventKind::Arrive || !Release.Barrier.resolved() ||
          !Order.isRelease(Release.Barrier.Array) || Reported.count(Seq.Steps[A].Event))
        continue;
      std::vector<Earlier> Back = Order.before(Seq, A);
      bool Done = false, Evaluated = false;
      std::vector<Sample> Samples = Order.samplesAt(Seq, A);
      for (const Sample &S : Samples) {
        std::optional<SlotRef> Empty = Order.slot(Release.Barrier, S);
        if (!Empty)
          continue;
        Evaluated = true;
        for (SlotRef Stage : Order.releasedBy(*Empty)) {
          const std::set<SlotRef> &Fills = Order.fillsOf(Stage);
          auto Acquires = [&](const Event &E, const Sample &T) {
            if (E.Kind != EventKind::Wait)
              return false;
            std::optional<SlotRef> B = Order.slot(E.Barrier, T);
            return B && Fills.count(*B);
          };
          auto Report = [&](const Event &Read, const std::string &Why) {
            const Buffer &Buf = P.Buffers[Stage.Array];
            std::string Msg;
            llvm::raw_string_ostream OS(Msg);
            OS << Order.who(Seq, A) << " releases " << Buf.Name << "[" << Stage.Slot
               << "] (arrive on " << P.Barriers[Empty->Array].Name << "[" << Empty->Slot
               << "]) for " << Order.describe(S, Seq, A) << " while " << Why
               << ", so the next fill can overwrite the stage under the read";
            Finding &F = Ctx.report(Severity::Error, Msg, Release);
            addNote(F, "the read of " + Buf.Name + "[" + std::to_string(Stage.Slot) + "]",
                    Read);
            Reported.insert(Seq.Steps[A].Event);
            Done = true;
          };
          // Reads after the release, before the stage is acquired again.
          for (unsigned J = A + 1; J < Seq.Steps.size() && !Done; ++J) {
            const Event &E = Order.event(Seq, J);
            if (Acquires(E, S))
              break;
            if (!overlaps(E.Threads, Release.Threads) && E.Kind != EventKind::Mma)
              continue;
            for (const BufferRef *R : Order.reads(E))
              if (Order.place(*R, S) == std::optional<SlotRef>(Stage) &&
                  Order.runs(Seq, J, S).value_or(false)) {
                Report(E, "a read of it is issued after the release");
                break;
              }
          }
          if (Done)
            break;
          // Reads before the release that may still be in flight.
          bool Tail = Seq.Steps[A].Loops.empty();
          for (const Earlier &E : Back) {
            std::optional<Sample> T = Order.at(Seq, E, A, S);
            if (!T || !Order.runs(Seq, E.Index, *T).value_or(false))
              continue;
            const Event &Read = Order.event(Seq, E.Index);
            if (Acquires(Read, *T))
              break;
            bool Hit = false;
            for (const BufferRef *R : Order.reads(Read))
              Hit |= Order.place(*R, *T) == std::optional<SlotRef>(Stage);
            if (!Hit)
              continue;
            if (Tail) {
              if (!Traffic)
                Traffic = traffic::expandTraffic(P);
              if (!awaited(*Traffic, Seq.Steps[A].Event, *Empty))
                break;
            }
            std::vector<unsigned> Between = Order.between(Seq, E, A);
            if (isSync(Read, models::SyncKind::WgmmaMmaAsync) &&
                !wgmmaDone(Order, Seq, Between))
              Report(Read, "the wgmma that reads it may still run (no wgmma.wait_group "
                           "retires its group before the arrive)");
            else if (isSync(Read, models::SyncKind::Tcgen05Mma) &&
                     !tcgen05Done(Order, Seq, Between, Release))
              Report(Read, "the tcgen05.mma that reads it may still run (a thread arrive "
                           "does not wait for the MMA; tcgen05.commit on the barrier does)");
            else if (Read.Kind == EventKind::SmemRead &&
                     !coveredBy(Read.Threads, Release.Threads) &&
                     !syncedWith(Order, Seq, Between, Read, Release))
              Report(Read, "threads that read it (" + Read.Threads.str() +
                               ") may not have finished: no barrier joins them with the "
                               "arriving thread");
            if (Done)
              break;
          }
          if (Done)
            break;
        }
        if (Done)
          break;
      }
      if (!Evaluated && !Samples.empty() && !Reported.count(Seq.Steps[A].Event)) {
        Ctx.report(Severity::Remark,
                   "the slot this arrive releases (" + Order.name(Release.Barrier) +
                       ") could not be evaluated, so whether reads of the stage are still in "
                       "flight was not checked",
                   Release);
        Reported.insert(Seq.Steps[A].Event);
      }
    }
  }
}
