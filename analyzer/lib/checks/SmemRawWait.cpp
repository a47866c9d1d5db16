//===- SmemRawWait.cpp - a stage read before the wait for its fill -----------------===//
//
// A TMA fill of A[s] signals completion only through the mbarrier it completes (complete_tx);
// a thread may read A[s] (as an MMA operand or with ld.shared) only after it observed that
// phase with a wait on the same barrier slot. For every read of a filled stage this check
// walks back through the reading role's program order, in the same iteration, and looks for
// a wait on a barrier slot that a fill of the read slot completes. Slots are compared by
// evaluating the closed forms for sampled iteration numbers and sizes, so the message names
// the values for which the wait is missing.
//
// A wait that is skipped on a peeked result (`if (!peek) wait(full[s])`) counts when the
// role peeked at the same barrier: the peek observed the phase. A wait whose condition cannot
// be evaluated otherwise makes the read a remark.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/FunctionAnalysis.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

enum class Cover { Waited, Missing, Unknown };

struct Search {
  Cover Result = Cover::Missing;
  const Event *Skipped = nullptr; ///< a wait on the fill barrier that does not run here
  const Event *Elsewhere = nullptr; ///< a wait on another slot of the fill barrier array
  SlotRef ElsewhereSlot;
};

/// Looks back from the read at step I for a wait on one of the fill barrier slots. A wait
/// under a condition wsv cannot evaluate (a peeked result) counts when a peek at the same
/// slot ran before it: the peek saw the phase complete or the wait runs.
Search findWait(const StageOrder &Order, const Sequence &Seq, unsigned I, const Sample &S,
                const std::set<SlotRef> &Fills) {
  Search Out;
  const Event &Read = Order.event(Seq, I);
  bool Conditional = false, Peeked = false;
  for (const Earlier &E : Order.before(Seq, I)) {
    const Event &W = Order.event(Seq, E.Index);
    if ((W.Kind != EventKind::Wait && W.Kind != EventKind::Probe) || !W.Barrier.resolved() ||
        !overlaps(W.Threads, Read.Threads))
      continue;
    // A wait of an earlier iteration observed an earlier phase; a peek may sit at the end
    // of the previous iteration (CUTLASS peeks at the next stage before looping).
    if (W.Kind == EventKind::Wait && E.Previous != NoIndex)
      continue;
    std::optional<Sample> T = Order.at(Seq, E, I, S);
    if (!T)
      continue;
    std::optional<SlotRef> Bar = Order.slot(W.Barrier, *T);
    if (!Bar)
      continue;
    std::optional<bool> Runs = Order.runs(Seq, E.Index, *T);
    if (!Fills.count(*Bar)) {
      if (W.Kind == EventKind::Wait && !Out.Elsewhere && Runs.value_or(false) &&
          Fills.begin()->Array == Bar->Array) {
        Out.Elsewhere = &W;
        Out.ElsewhereSlot = *Bar;
      }
      continue;
    }
    if (W.Kind == EventKind::Probe) {
      Peeked |= Runs.value_or(false);
      continue;
    }
    if (Runs && *Runs) {
      Out.Result = Cover::Waited;
      return Out;
    }
    if (!Runs)
      Conditional = true;
    else if (!Out.Skipped)
      Out.Skipped = &W;
  }
  if (Conditional)
    Out.Result = Peeked ? Cover::Waited : Cover::Unknown;
  return Out;
}

/// How many arrivals on hardware barrier Id (a `barrier.sync Id` of the whole CTA) a
/// sequence makes before its step I. AtMost counts every step that may arrive there, and is
/// nothing when one sits in a loop, names an unknown id, or gives Id a thread count. Synced
/// is the position of the last arrival that is a sync the sequence surely passes (outside
/// loops or earlier in the same iteration of I's, unconditional, by Threads): its instance
/// is at least that one, since arrivals the count missed only make it later.
struct Arrivals {
  std::optional<unsigned> AtMost = 0;
  unsigned Synced = 0;
};
Arrivals arrivalsBefore(const StageOrder &Order, const Sequence &Seq, unsigned I, uint64_t Id,
                        const ThreadSet &Threads) {
  Arrivals Out;
  unsigned Sure = 0;
  for (unsigned J = 0; J < I; ++J) {
    const Event &E = Order.event(Seq, J);
    if (E.Kind != EventKind::NamedBarrier || !overlaps(E.Threads, Threads))
      continue;
    std::optional<uint64_t> Other = E.Named.Id.constant();
    if (Other && *Other != Id)
      continue;
    // A step in loops around step I too runs before it in the same iteration: at least once
    // more (Triton's dispatch loop passes its barrier at the top of every round).
    const auto &Loops = Seq.Steps[J].Loops, &Around = Seq.Steps[I].Loops;
    bool Enclosing = Loops.size() <= Around.size() &&
                     std::equal(Loops.begin(), Loops.end(), Around.begin());
    bool Certain = Other && E.Named.Threads.absent() && Enclosing && !E.When.known() &&
                   coveredBy(Threads, E.Threads);
    if (!Certain || !Loops.empty() || !Out.AtMost)
      Out.AtMost = std::nullopt;
    else
      ++*Out.AtMost;
    if (Certain) {
      ++Sure;
      if (E.Detail != "arrive")
        Out.Synced = Sure;
    }
  }
  return Out;
}

/// Whether another role's wait on the fill barrier is ordered before the read at step I by a
/// CTA-wide `barrier.sync X`: the waiter arrives on X at most c times before its wait, and
/// the reader passes an instance after c of its own arrivals, so the waiter's arrival c + 1,
/// which follows its wait, is in it. Triton's warp-specialized kernels load the query tile in
/// the default partition, wait for it there, and release the worker warps that read it with
/// the barrier of the warp dispatch. It counts only where the stage's fills, and every copy
/// that completes their barrier, run outside loops: the waiter then observed the phase that
/// the fill completes.
bool waitedElsewhere(const StageOrder &Order, const Sequence &Seq, unsigned I, const Sample &S,
                     const std::set<SlotRef> &Fills, unsigned Buffer) {
  unsigned FillBarrier = Fills.begin()->Array;
  for (const Sequence &Other : Order.sequences())
    for (unsigned J = 0; J < Other.Steps.size(); ++J) {
      const Event &E = Order.event(Other, J);
      bool Filling = E.Kind == EventKind::AsyncLoad &&
                     ((E.Dst.resolved() && E.Dst.Buffer == Buffer) ||
                      (E.Barrier.resolved() && E.Barrier.Array == FillBarrier));
      if (Filling && !Other.Steps[J].Loops.empty())
        return false;
    }
  // The reader's side, once per barrier id it passes before the read.
  const Event &Read = Order.event(Seq, I);
  std::map<uint64_t, unsigned> ReaderSynced;
  for (unsigned J = 0; J < I; ++J) {
    const Event &E = Order.event(Seq, J);
    if (E.Kind == EventKind::NamedBarrier && E.Named.Threads.absent() && E.Named.Id.constant())
      ReaderSynced.try_emplace(*E.Named.Id.constant());
  }
  for (auto &[Id, Synced] : ReaderSynced)
    Synced = arrivalsBefore(Order, Seq, I, Id, Read.Threads).Synced;
  for (const Sequence &Other : Order.sequences()) {
    if (&Other == &Seq)
      continue;
    for (unsigned J = 0; J < Other.Steps.size(); ++J) {
      const Event &W = Order.event(Other, J);
      if (W.Kind != EventKind::Wait || !W.Barrier.resolved() || !Other.Steps[J].Loops.empty())
        continue;
      std::optional<SlotRef> Bar = Order.slot(W.Barrier, S);
      if (!Bar || !Fills.count(*Bar) || !Order.runs(Other, J, S).value_or(false))
        continue;
      for (const auto &[Id, Synced] : ReaderSynced) {
        Arrivals Waiter = arrivalsBefore(Order, Other, J, Id, W.Threads);
        if (Waiter.AtMost && Synced > *Waiter.AtMost)
          return true;
      }
    }
  }
  return false;
}

/// Whether the role has waited on a barrier an async copy completes before step I (in this
/// iteration, an earlier one or an earlier loop).
bool consumesFillsBefore(const StageOrder &Order, const Sequence &Seq, unsigned I) {
  const Protocol &P = Order.protocol();
  std::set<unsigned> Full;
  for (const Event &E : P.Events)
    if (E.Kind == EventKind::AsyncLoad && E.Barrier.resolved())
      Full.insert(E.Barrier.Array);
  for (const Earlier &B : Order.before(Seq, I)) {
    const Event &E = Order.event(Seq, B.Index);
    if ((E.Kind == EventKind::Wait || E.Kind == EventKind::Probe) && E.Barrier.resolved() &&
        Full.count(E.Barrier.Array))
      return true;
  }
  return false;
}

const Event *fillOf(const Protocol &P, unsigned Buffer) {
  for (const Event &E : P.Events)
    if (E.Kind == EventKind::AsyncLoad && E.Dst.resolved() && E.Dst.Buffer == Buffer)
      return &E;
  return nullptr;
}

/// Where a wait that the read at step I lacks belongs: the first instruction of the innermost
/// loop around the read, where each of its iterations begins (the wait looks for the phase of
/// the stage that iteration reads). std::nullopt outside a loop or without its CFG.
std::optional<SourceRef> iterationStart(const StageOrder &Order, const Sequence &Seq,
                                        unsigned I) {
  const Protocol &P = Order.protocol();
  const Step &St = Seq.Steps[I];
  if (St.Loops.empty() || !P.Analysis || St.Loops.back() >= P.Loops.size() ||
      P.Loops[St.Loops.back()].Loop == NoIndex)
    return std::nullopt;
  const Loop &L = P.Analysis->loops().loop(P.Loops[St.Loops.back()].Loop);
  const BasicBlock &Header = P.Analysis->cfg().block(L.Header);
  if (Header.empty())
    return std::nullopt;
  return sourceOf(P, Header.Begin);
}

} // namespace

void wsv::analyzer::checks::SmemRawWait(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  StageOrder Order(P);
  std::set<unsigned> Reported; // events, so a read in several roles' sequences is said once
  std::set<std::pair<const Sequence *, llvm::SmallVector<unsigned, 3>>> SaidFor;
  for (const Sequence &Seq : Order.sequences()) {
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &Read = Order.event(Seq, I);
      auto Reads = Order.reads(Read);
      if (Reads.empty() || Reported.count(Seq.Steps[I].Event))
        continue;
      // An MMA reads its operands from stages; a generic load from memory a copy fills is a
      // stage read only once its role consumes fills (compilers such as Triton reuse a
      // stage's memory for other data before the pipeline starts: the TMEM address slot).
      if (Read.Kind != EventKind::Mma && !consumesFillsBefore(Order, Seq, I))
        continue;
      bool Unknown = false, Placed = false;
      for (const Sample &S : Order.samplesAt(Seq, I)) {
        for (const BufferRef *R : Reads) {
          std::optional<SlotRef> At = Order.place(*R, S);
          Placed |= At.has_value();
          if (!At || !Order.isFilled(At->Array))
            continue;
          const std::set<SlotRef> &Fills = Order.fillsOf(*At);
          if (Fills.empty())
            continue;
          Search Found = findWait(Order, Seq, I, S, Fills);
          if (Found.Result == Cover::Waited ||
              waitedElsewhere(Order, Seq, I, S, Fills, At->Array))
            continue;
          // Every read of the stage after the same missing wait has the same cause: say it
          // once per role and loop body.
          auto Key = std::make_pair(&Seq, Seq.Steps[I].Loops);
          if (Found.Result == Cover::Missing && !SaidFor.insert(Key).second) {
            Reported.insert(Seq.Steps[I].Event);
            break;
          }
          if (Found.Result == Cover::Unknown) {
            Unknown = true;
            continue;
          }
          const Buffer &Buf = P.Buffers[At->Array];
          const BarrierArray &Full = P.Barriers[Fills.begin()->Array];
          // An iteration of a loop whose trip count is unknown may not exist (clang's
          // unrolled remainder loops step through a stage in one iteration): undecided.
          bool Guess = !Order.runs(Seq, I, S) && Order.guessesIterations(Seq, I, S);
          std::string Msg;
          llvm::raw_string_ostream OS(Msg);
          if (Guess)
            OS << "if its loop runs that often (the trip count is not known), ";
          if (Found.Skipped)
            OS << "this wait on " << Order.name(Found.Skipped->Barrier)
               << " is skipped, and ";
          OS << Order.who(Seq, I) << " reads " << Buf.Name << "[" << At->Slot << "] ("
             << (Read.Kind == EventKind::Mma ? "MMA operand" : "ld.shared") << ") for "
             << Order.describe(S, Seq, I) << " without waiting on " << Full.Name << "["
             << Fills.begin()->Slot << "], the barrier its fill completes, so it may read the "
             << "stage before the copy has written it";
          // When a wait on the fill barrier exists but is skipped for these values, the bug
          // is its condition: point there, and at the read.
          Finding &F = Ctx.report(Guess ? Severity::Remark : Severity::Error, Msg,
                                  Found.Skipped ? *Found.Skipped : Read);
          if (Found.Skipped)
            addNote(F, "the read that goes ahead without the wait", Read);
          else if (std::optional<SourceRef> Start = iterationStart(Order, Seq, I))
            F.Notes.push_back({"the wait would belong here, where the loop iteration that "
                               "reads the stage begins: no wait on " + Full.Name + "[" +
                                   std::to_string(Fills.begin()->Slot) +
                                   "], the barrier of the stage's fill, precedes the read in "
                                   "this iteration",
                               std::move(*Start)});
          if (Found.Elsewhere)
            addNote(F, "the wait before the read is on " + Full.Name + "[" +
                           std::to_string(Found.ElsewhereSlot.Slot) + "], another stage",
                    *Found.Elsewhere);
          if (const Event *Fill = fillOf(P, At->Array))
            addNote(F, Buf.Name + " is filled here, completing " + Order.name(Fill->Barrier),
                    *Fill);
          Reported.insert(Seq.Steps[I].Event);
          break;
        }
        if (Reported.count(Seq.Steps[I].Event))
          break;
      }
      // An MMA reads shared memory: operands wsv cannot place may be a stage it never checked.
      if (!Placed && Read.Kind == EventKind::Mma && !Reported.count(Seq.Steps[I].Event)) {
        std::string Why = Reads.front()->Unresolved.empty() ? std::string("no sampled value")
                                                            : Reads.front()->Unresolved;
        Ctx.report(Severity::Remark,
                   "the MMA's operands could not be placed in a stage buffer (" + Why +
                       "), so whether it waits for their fill was not checked",
                   Read);
        Reported.insert(Seq.Steps[I].Event);
        continue;
      }
      if (Unknown && !Reported.count(Seq.Steps[I].Event)) {
        Ctx.report(Severity::Remark,
                   "whether this read of a filled stage is preceded by a wait on its fill "
                   "barrier depends on a condition wsv cannot evaluate, so it was not checked",
                   Read);
        Reported.insert(Seq.Steps[I].Event);
      }
    }
  }
}
