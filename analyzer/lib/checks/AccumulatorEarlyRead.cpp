//===- AccumulatorEarlyRead.cpp - accumulators read before the MMAs finished --------===//
//
// Three ways the accumulator is read or overwritten too early:
//  - mma2ld: tcgen05.mma is asynchronous; its TMEM result is defined only once a
//    tcgen05.commit after it has completed an mbarrier (the flush / mma2ld / acc_full barrier)
//    and the reader observed that phase. A tcgen05.ld must be preceded by a wait on such a
//    barrier, in its own threads or in threads that then joined it at a CTA or named barrier.
//    Waits on a stage's release barrier (empty[s], also completed by commits) do not count:
//    they say the operands were read, not that the accumulator is written.
//  - ld2mma: in a persistent kernel the next tile's MMAs overwrite TMEM; they must wait on the
//    barrier the TMEM readers arrive on after their tcgen05.ld, and the readers must arrive
//    only after their tcgen05.wait::ld (a tcgen05.ld reads until then).
//  - wgmma: the accumulator registers are defined only after `wgmma.wait_group 0` (or a wait
//    that retires the last group); a role whose last wgmma group is still in flight when it
//    leaves its loop reads them early. ptxas may insert a wait of its own (warning C7518) on
//    some builds; the PTX is still wrong and the next compiler may not.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/FunctionAnalysis.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// Barrier arrays tcgen05.commit completes that say "the MMAs are done": not the slots of a
/// stage ring's release barrier (the last wait on empty[s] observes an early stage's commit),
/// but a single barrier may be both (one warp that waits for its MMAs before each refill).
std::set<unsigned> mmaDoneBarriers(const StageOrder &Order) {
  const Protocol &P = Order.protocol();
  std::set<unsigned> Out;
  for (const Event &E : P.Events)
    if (E.Kind == EventKind::MmaCommit && E.Barrier.resolved() &&
        (!Order.isRelease(E.Barrier.Array) || P.Barriers[E.Barrier.Array].Slots == 1))
      Out.insert(E.Barrier.Array);
  return Out;
}

/// What the walk back from a step found: a wait on one of the arrays, or only waits whose
/// barrier wsv could not resolve (which may be the one), or neither.
struct WaitSearch {
  const Event *Found = nullptr;
  const Event *Unresolved = nullptr;
};

/// Looks for a wait on one of Arrays before step I of Seq, also through CTA/named barriers
/// that join Seq's threads with another role that waited.
WaitSearch waitBefore(const StageOrder &Order, const Sequence &Seq, unsigned I,
                      const std::set<unsigned> &Arrays, unsigned Depth = 0) {
  WaitSearch Out;
  const Event &At = Order.event(Seq, I);
  for (const Earlier &E : Order.before(Seq, I)) {
    const Event &W = Order.event(Seq, E.Index);
    if (W.Kind == EventKind::Wait && overlaps(W.Threads, At.Threads)) {
      if (!W.Barrier.resolved() && !Out.Unresolved)
        Out.Unresolved = &W;
      if (W.Barrier.resolved() && Arrays.count(W.Barrier.Array)) {
        Out.Found = &W;
        return Out;
      }
    }
    if (Depth == 0 && synchronizes(W, At.Threads))
      for (const Sequence &Other : Order.sequences()) {
        if (&Other == &Seq)
          continue;
        for (unsigned J = 0; J < Other.Steps.size(); ++J)
          if (Other.Steps[J].Event == Seq.Steps[E.Index].Event) {
            WaitSearch There = waitBefore(Order, Other, J, Arrays, Depth + 1);
            if (There.Found)
              return There;
            if (!Out.Unresolved)
              Out.Unresolved = There.Unresolved;
          }
      }
  }
  return Out;
}

/// Where the missing wait belongs, seen from a tcgen05.ld at step I that waits on none: the
/// nearest tcgen05.fence::after_thread_sync of its threads before it (the wait precedes that
/// fence: it orders the load after a synchronization that never came) and the nearest CTA or
/// named barrier that joins its threads with others (the roles that reach it did not wait
/// either, or waitBefore would have found their wait).
void noteWaitPlace(Finding &F, const StageOrder &Order, const Sequence &Seq, unsigned I,
                   const std::string &Done) {
  const Event &At = Order.event(Seq, I);
  bool FenceSaid = false;
  for (const Earlier &E : Order.before(Seq, I)) {
    if (E.Previous != NoIndex)
      break; // only the same iteration: an earlier one is not where this load's wait goes
    const Event &W = Order.event(Seq, E.Index);
    if (!FenceSaid && W.Kind == EventKind::Fence &&
        isSync(W, models::SyncKind::Tcgen05FenceAfterThreadSync) &&
        overlaps(W.Threads, At.Threads)) {
      addNote(F,
              "the wait would belong before this tcgen05.fence::after_thread_sync: nothing "
              "orders it after a wait on " + Done,
              W);
      FenceSaid = true;
    }
    if (synchronizes(W, At.Threads)) {
      addNote(F,
              "the wait would belong before this barrier: no thread that reaches it waited "
              "on " + Done + " first",
              W);
      return;
    }
  }
}

/// Where the missing wait on Freed belongs, seen from an MMA at step I that overwrites the
/// accumulator of a later tile: the tile loop is the outermost loop around the MMA (each of its
/// iterations rewrites TMEM), and the wait precedes the first tcgen05.fence::after_thread_sync
/// of its threads in that loop's body, which orders the MMAs after a synchronization that
/// never came; without such a fence, the body's first step.
void noteOverwriteWaitPlace(Finding &F, const StageOrder &Order, const Sequence &Seq,
                            unsigned I, const std::string &Freed) {
  const Event &Mma = Order.event(Seq, I);
  auto [Begin, End] = Order.body(Seq, Seq.Steps[I].Loops.front(), I);
  (void)End;
  for (unsigned J = Begin; J < I; ++J) {
    const Event &W = Order.event(Seq, J);
    if (W.Kind == EventKind::Fence &&
        isSync(W, models::SyncKind::Tcgen05FenceAfterThreadSync) &&
        overlaps(W.Threads, Mma.Threads)) {
      addNote(F,
              "the wait on " + Freed + " would belong before this tcgen05.fence::"
              "after_thread_sync of the tile's body: nothing orders the MMA after a wait on " +
                  Freed + " here",
              W);
      return;
    }
  }
  if (Begin < I)
    addNote(F,
            "the wait on " + Freed + " would belong before this first step of the tile's "
            "body: nothing in it orders the MMA after a wait on " + Freed,
            Order.event(Seq, Begin));
}

/// Why the order around step I cannot be decided: threads or loops wsv could not count.
std::string undecided(const StageOrder &Order, const Sequence &Seq, unsigned I) {
  const Protocol &P = Order.protocol();
  const Event &E = Order.event(Seq, I);
  if (E.Threads.isUnknown())
    return "its threads are unknown: " + E.Threads.reason();
  for (unsigned L : Seq.Steps[I].Loops)
    if (!P.Loops[L].Trip.known())
      return "a loop around it has no trip count: " + P.Loops[L].Trip.Unknown;
  return {};
}

void checkTmemLoads(CheckContext &Ctx, const StageOrder &Order) {
  const Protocol &P = Ctx.protocol();
  bool AnyMma = false;
  for (const Event &E : P.Events)
    AnyMma |= isSync(E, models::SyncKind::Tcgen05Mma);
  if (!AnyMma)
    return;
  std::set<unsigned> Done = mmaDoneBarriers(Order);
  std::set<unsigned> Reported;
  std::set<std::pair<const Sequence *, llvm::SmallVector<unsigned, 3>>> SaidFor;
  for (const Sequence &Seq : Order.sequences())
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &Ld = Order.event(Seq, I);
      if (Ld.Kind != EventKind::TmemLoad || Reported.count(Seq.Steps[I].Event))
        continue;
      WaitSearch Search = waitBefore(Order, Seq, I, Done);
      if (Search.Found)
        continue;
      Reported.insert(Seq.Steps[I].Event);
      // The loads after the same missing wait share its cause: say it at the first.
      if (!SaidFor.insert(std::make_pair(&Seq, Seq.Steps[I].Loops)).second)
        continue;
      std::string Why = undecided(Order, Seq, I);
      if (Search.Unresolved || !Why.empty()) {
        Finding &F = Ctx.report(
            Severity::Remark,
            "whether this tcgen05.ld waits for the MMAs to finish was not decided (" +
                (Why.empty() ? std::string("a wait before it is on a barrier wsv could not "
                                           "resolve")
                             : Why) +
                ")",
            Ld);
        if (Search.Unresolved)
          addNote(F, "the unresolved wait", *Search.Unresolved);
        continue;
      }
      std::string Msg = Order.who(Seq, I) + " reads TMEM with tcgen05.ld without first waiting "
                                            "on a barrier that a tcgen05.commit after the MMAs "
                                            "completes";
      Msg += Done.empty() ? " (no commit completes such a barrier)" : "";
      Msg += ", so it can read the accumulator while the MMAs still write it";
      Finding &F = Ctx.report(Severity::Error, Msg, Ld);
      std::string DoneName = "a barrier a tcgen05.commit completes";
      if (Done.size() == 1)
        DoneName = P.Barriers[*Done.begin()].Name;
      noteWaitPlace(F, Order, Seq, I, DoneName);
      for (const Event &M : P.Events)
        if (M.Kind == EventKind::MmaCommit && M.Barrier.resolved() &&
            Done.count(M.Barrier.Array)) {
          addNote(F, "the MMAs' completion is committed to " + Order.name(M.Barrier) +
                         " here; the readers must wait on it",
                  M);
          break;
        }
    }
}

/// Barriers the TMEM readers arrive on after a tcgen05.ld: they say "TMEM is free".
std::set<unsigned> freedBarriers(const StageOrder &Order) {
  std::set<unsigned> Freed;
  for (const Sequence &Seq : Order.sequences()) {
    bool Loaded = false;
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &E = Order.event(Seq, I);
      Loaded |= E.Kind == EventKind::TmemLoad;
      if (Loaded && E.Kind == EventKind::Arrive && E.Barrier.resolved() &&
          !Order.isRelease(E.Barrier.Array))
        Freed.insert(E.Barrier.Array);
    }
  }
  return Freed;
}

void checkTmemOverwrite(CheckContext &Ctx, const StageOrder &Order,
                        const std::set<unsigned> &Freed) {
  const Protocol &P = Ctx.protocol();
  if (Freed.empty())
    return;
  std::set<unsigned> Reported;
  std::set<std::pair<const Sequence *, llvm::SmallVector<unsigned, 3>>> SaidFor;
  for (const Sequence &Seq : Order.sequences())
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &M = Order.event(Seq, I);
      // Only MMAs that run again for a later tile can overwrite a result still being read.
      if (!isSync(M, models::SyncKind::Tcgen05Mma) || Seq.Steps[I].Loops.size() < 2 ||
          Reported.count(Seq.Steps[I].Event))
        continue;
      WaitSearch Search = waitBefore(Order, Seq, I, Freed);
      if (Search.Found)
        continue;
      Reported.insert(Seq.Steps[I].Event);
      if (!SaidFor.insert(std::make_pair(&Seq, Seq.Steps[I].Loops)).second)
        continue;
      std::string Why = undecided(Order, Seq, I);
      if (Search.Unresolved || !Why.empty()) {
        Finding &F = Ctx.report(
            Severity::Remark,
            "whether this tcgen05.mma waits until the previous tile's accumulator was read "
            "was not decided (" +
                (Why.empty() ? std::string("a wait before it is on a barrier wsv could not "
                                           "resolve")
                             : Why) +
                ")",
            M);
        if (Search.Unresolved)
          addNote(F, "the unresolved wait", *Search.Unresolved);
        continue;
      }
      const BarrierArray &B = P.Barriers[*Freed.begin()];
      Finding &F = Ctx.report(
          Severity::Error,
          Order.who(Seq, I) + " issues tcgen05.mma for the next tile without waiting on " +
              B.Name + ", which the TMEM readers arrive on after tcgen05.ld, so the MMA "
                       "overwrites the accumulator while the previous tile is still read",
          M);
      for (const Event &E : P.Events)
        if (E.Kind == EventKind::Arrive && E.Barrier.resolved() &&
            E.Barrier.Array == *Freed.begin()) {
          addNote(F, "the readers free TMEM here", E);
          break;
        }
      noteOverwriteWaitPlace(F, Order, Seq, I, B.Name);
    }
}

/// A tcgen05.ld reads until its threads' tcgen05.wait::ld: a reader that frees the
/// accumulator before it (an arrive on a barrier of Freed) lets the next tile's MMA, which
/// waits for that arrive, overwrite columns still being read, however the MMA waits.
void checkTmemRelease(CheckContext &Ctx, const StageOrder &Order,
                      const std::set<unsigned> &Freed) {
  std::set<unsigned> Reported;
  for (const Sequence &Seq : Order.sequences()) {
    const Event *Pending = nullptr; // the last tcgen05.ld no wait::ld of its threads ended
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &E = Order.event(Seq, I);
      if (E.Kind == EventKind::TmemLoad) {
        Pending = &E;
      } else if (Pending && E.Kind == EventKind::TmemWait && E.Detail == "ld" &&
                 overlaps(E.Threads, Pending->Threads)) {
        Pending = nullptr;
      } else if (Pending && E.Kind == EventKind::Arrive && E.Barrier.resolved() &&
                 Freed.count(E.Barrier.Array) && Reported.insert(Seq.Steps[I].Event).second) {
        Finding &F = Ctx.report(
            Severity::Error,
            Order.who(Seq, I) + " frees the accumulator (arrives on " + Order.name(E.Barrier) +
                ") before tcgen05.wait::ld, so the next tile's tcgen05.mma may overwrite "
                "columns its tcgen05.ld still reads",
            E);
        addNote(F, "the tcgen05.ld that may still read them", *Pending);
        for (unsigned J = I + 1; J < Seq.Steps.size(); ++J) {
          const Event &W = Order.event(Seq, J);
          if (W.Kind == EventKind::TmemWait && W.Detail == "ld" &&
              overlaps(W.Threads, Pending->Threads)) {
            addNote(F, "the tcgen05.wait::ld comes only here: the arrive belongs after it", W);
            break;
          }
        }
      }
    }
  }
}

/// The first source position at the exit of Loop (a Protocol::Loops index): the first `.loc`
/// after the label of its only exit block. The code the compiler puts there may be no
/// instruction at all (an empty asm that fences the accumulators), so the position is the
/// directive's; std::nullopt when the loop ends in several places or there is no such `.loc`.
std::optional<SourceRef> loopExitPosition(const Protocol &P, unsigned Loop) {
  if (!P.Analysis || Loop >= P.Loops.size() || P.Loops[Loop].Loop == NoIndex)
    return std::nullopt;
  const Cfg &G = P.Analysis->cfg();
  const analyzer::Loop &L = P.Analysis->loops().loop(P.Loops[Loop].Loop);
  // The exit a loop's last iteration takes: from a latch (the instrumented build adds exits
  // into its checks' failure paths, which are not where the loop ends).
  std::set<BlockId> Exits;
  for (const auto &[Inside, Outside] : L.ExitEdges)
    if (llvm::is_contained(L.Latches, Inside))
      Exits.insert(Outside);
  if (Exits.empty())
    for (BlockId Out : L.exitBlocks())
      Exits.insert(Out);
  if (Exits.size() != 1)
    return std::nullopt;
  const BasicBlock &B = G.block(*Exits.begin());
  if (!B.Label || B.Begin >= B.End)
    return std::nullopt;
  const char *From = B.Label->ptr(), *To = G.inst(B.Begin).I->ptr();
  const ptx::LocDirective *First = nullptr;
  // Directives between the label and the block's first instruction, in the function body
  // or a scope nested in it.
  std::function<void(const ptx::Scope &)> Walk = [&](const ptx::Scope &S) {
    for (const ptx::Statement *St : S.body()) {
      if (First)
        return;
      if (const auto *Inner = llvm::dyn_cast<ptx::Scope>(St))
        Walk(*Inner);
      else if (const auto *Loc = llvm::dyn_cast<ptx::LocDirective>(St))
        if (Loc->ptr() > From && Loc->ptr() < To)
          First = Loc;
    }
  };
  if (const ptx::Scope *Body = G.function().body())
    Walk(*Body);
  if (!First)
    return std::nullopt;
  SourceRef R;
  ptx::SourceLocation At = G.module().location(*First);
  R.PtxLine = At.Line;
  R.PtxColumn = At.Column;
  for (const ptx::LocDirective *D = First; D; D = D->inlinedAt()) {
    ptx::CudaLocation C = G.module().cudaLocation(*D);
    CudaFrame Frame;
    Frame.File = C.File.str();
    Frame.Line = C.Line;
    Frame.Column = C.Column;
    if (!C.InlinedFunction.empty())
      Frame.Function = llvm::demangle(C.InlinedFunction);
    R.Cuda.push_back(std::move(Frame));
  }
  return R;
}

void checkWgmma(CheckContext &Ctx, const StageOrder &Order) {
  std::set<unsigned> Reported;
  for (const Sequence &Seq : Order.sequences()) {
    // The last commit of wgmma groups in program order, then whether a wait retires it.
    int LastCommit = -1;
    for (unsigned I = 0; I < Seq.Steps.size(); ++I)
      if (isSync(Order.event(Seq, I), models::SyncKind::WgmmaCommitGroup))
        LastCommit = static_cast<int>(I);
    if (LastCommit < 0 || Reported.count(Seq.Steps[LastCommit].Event))
      continue;
    const Step &Commit = Seq.Steps[LastCommit];
    bool Retired = false;
    const Event *LastWait = nullptr;
    int After = -1; // the first step outside the commit's loops
    for (unsigned I = LastCommit + 1; I < Seq.Steps.size() && !Retired; ++I) {
      const Event &E = Order.event(Seq, I);
      if (isSync(E, models::SyncKind::WgmmaWaitGroup)) {
        LastWait = &E;
        Retired = E.WaitN.constant() == std::optional<uint64_t>(0);
        if (!E.WaitN.constant()) {
          Ctx.report(Severity::Remark,
                     "the group count of this wgmma.wait_group is not a constant, so whether "
                     "the accumulators are read before the last group finished was not checked",
                     E);
          Retired = true;
        }
      }
      if (After < 0 && Seq.Steps[I].Loops.size() < Commit.Loops.size() &&
          !isSync(E, models::SyncKind::WgmmaWaitGroup))
        After = static_cast<int>(I);
    }
    if (Retired)
      continue;
    Reported.insert(Commit.Event);
    const Event &At = After >= 0 ? Order.event(Seq, After)
                                 : (LastWait ? *LastWait : Order.event(Seq, LastCommit));
    std::string Msg = Order.who(Seq, LastCommit) +
                      " goes on to read its wgmma accumulators while the last wgmma group may "
                      "still run: no wgmma.wait_group 0 follows the last commit_group";
    if (LastWait)
      Msg += " (the last wait leaves " +
             (LastWait->WaitN.known() ? Ctx.protocol().exprString(LastWait->WaitN.E)
                                      : std::string("some")) +
             " in flight)";
    Msg += ", so the epilogue can read unfinished results (ptxas may add its own wait, "
           "warning C7518, but the PTX does not wait)";
    Finding &F = Ctx.report(Severity::Error, Msg, At);
    addNote(F, "the last wgmma group is committed here", Order.event(Seq, LastCommit));
    if (!Commit.Loops.empty())
      if (std::optional<SourceRef> Exit = loopExitPosition(Ctx.protocol(), Commit.Loops.back()))
        F.Notes.push_back({"the wait would belong here, where the loop that commits the last "
                           "group exits: nothing between here and the accumulators' reads "
                           "retires that group",
                           std::move(*Exit)});
    if (LastWait && LastWait != &At)
      addNote(F, "the last wgmma.wait_group", *LastWait);
  }
}

} // namespace

void wsv::analyzer::checks::AccumulatorEarlyRead(CheckContext &Ctx) {
  StageOrder Order(Ctx.protocol());
  checkTmemLoads(Ctx, Order);
  std::set<unsigned> Freed = freedBarriers(Order);
  checkTmemOverwrite(Ctx, Order, Freed);
  checkTmemRelease(Ctx, Order, Freed);
  checkWgmma(Ctx, Order);
}
