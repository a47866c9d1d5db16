//===- BulkStoreReuse.cpp - a TMA-store staging buffer rewritten too early ---------===//
//
// A TMA store (cp.async.bulk.tensor shared -> global) reads its shared-memory source
// asynchronously. The source may be written again only after the store's bulk group was
// committed (cp.async.bulk.commit_group) and a cp.async.bulk.wait_group{.read} N retired it:
// N groups may stay pending, so the group is retired once N newer groups were committed
// before the wait. For each write into a store's source buffer the check walks back to the
// nearest store from the same buffer and slot (this iteration, the previous one, earlier
// loops) and counts the commits and waits in between. A wait orders only the threads that
// run it: writers that did not run it need a barrier with the waiting threads after it.
//
// The CTA's exit frees the source too (the next CTA on the SM gets its shared memory): the
// last store of each role must be retired, by the threads that issued it, before they exit.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// Iterations back a staging ring is searched for the store that last read a slot.
constexpr unsigned MaxRingDistance = 8;

/// How far the waits among Between retire the store's bulk group for the writing threads.
enum class Retired : uint8_t {
  No,
  /// A wait retires it, but only for the threads that run it (an elected thread), and no
  /// barrier after it makes the other writers wait for them: they may write first.
  ForWaitersOnly,
  Yes,
};

/// Whether the bulk group of the store is retired by a wait among Between, for the threads
/// of Write. A wait orders only the threads that run it; the others are ordered after it by a
/// barrier both take part in (h5's elected thread waits, then bar.sync, then every thread's
/// stmatrix).
Retired retired(const StageOrder &Order, const Sequence &Seq, const std::vector<unsigned> &Between,
                const Event &Write, const Event *&Commit, const Event *&Wait) {
  GroupRetirement Group(models::SyncKind::BulkCommitGroup, models::SyncKind::BulkWaitGroup);
  Retired Out = Retired::No;
  Wait = nullptr;
  for (unsigned J : Between) {
    const Event &E = Order.event(Seq, J);
    if (Wait && synchronizes(E, Write.Threads) && synchronizes(E, Wait->Threads)) {
      Out = Retired::Yes;
      break;
    }
    if (Group.retiredBy(E)) {
      if (coveredBy(Write.Threads, E.Threads)) {
        Out = Retired::Yes;
        break;
      }
      if (!Wait)
        Wait = &E;
    }
  }
  Commit = Group.firstCommit();
  return Out == Retired::No && Wait ? Retired::ForWaitersOnly : Out;
}

/// The step where a missing wait belongs: the first one after the store and the commits
/// and waits that follow it (where the correct program retires the group), or nullptr when
/// the write itself comes first.
const Event *waitPlace(const StageOrder &Order, const Sequence &Seq,
                       const std::vector<unsigned> &Between) {
  for (unsigned J : Between) {
    const Event &E = Order.event(Seq, J);
    if (E.Kind == EventKind::AsyncStore || isSync(E, models::SyncKind::BulkCommitGroup) ||
        isSync(E, models::SyncKind::BulkWaitGroup))
      continue;
    return &E;
  }
  return nullptr;
}

/// Whether the store at step I of Seq is retired before the sequence ends: a commit after it
/// and a wait that leaves none of the groups since pending, both run by its threads.
bool retiredBeforeExit(const StageOrder &Order, const Sequence &Seq, unsigned I) {
  const Event &Store = Order.event(Seq, I);
  GroupRetirement Group(models::SyncKind::BulkCommitGroup, models::SyncKind::BulkWaitGroup);
  for (unsigned J = I + 1; J < Seq.Steps.size(); ++J) {
    const Event &E = Order.event(Seq, J);
    if (coveredBy(Store.Threads, E.Threads) && Group.retiredBy(E))
      return true;
  }
  return false;
}

/// Reports the last TMA store of each role that may still read shared memory when its
/// threads exit.
void storesAtExit(CheckContext &Ctx, const StageOrder &Order) {
  // Every role's sequence holds the epilogue after the roles join: say it once.
  std::set<unsigned> Said;
  for (const Sequence &Seq : Order.sequences()) {
    unsigned Last = NoIndex;
    for (unsigned I = 0; I < Seq.Steps.size(); ++I)
      if (Order.event(Seq, I).Kind == EventKind::AsyncStore)
        Last = I;
    if (Last == NoIndex || retiredBeforeExit(Order, Seq, Last) ||
        !Said.insert(Seq.Steps[Last].Event).second)
      continue;
    const Event &Store = Order.event(Seq, Last);
    Ctx.report(
        Severity::Error,
        Order.who(Seq, Last) + "'s last TMA store may still read shared memory when " +
            describeThreads(possibleThreads(Store.Threads)) +
            " exit: no cp.async.bulk.commit_group and cp.async.bulk.wait_group{.read} 0 "
            "after it retires its bulk group, and the CTA's exit hands its shared memory to "
            "the next CTA on the SM, which can overwrite the data before the store read it",
        Store);
  }
}

} // namespace

void wsv::analyzer::checks::BulkStoreReuse(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  StageOrder Order(P);
  std::set<unsigned> Sources;
  for (const Event &E : P.Events) {
    if (E.Kind != EventKind::AsyncStore)
      continue;
    if (E.Src.resolved())
      Sources.insert(E.Src.Buffer);
    else
      Ctx.report(Severity::Remark,
                 "the source of this TMA store is not a buffer wsv identified (" +
                     (E.Src.Unresolved.empty() ? std::string("no address") : E.Src.Unresolved) +
                     "), so rewrites of it before the store finished were not checked",
                 E);
  }
  std::set<unsigned> Reported;
  std::set<std::pair<const Sequence *, unsigned>> SaidFor;
  for (const Sequence &Seq : Order.sequences())
    for (unsigned W = 0; W < Seq.Steps.size(); ++W) {
      const Event &Write = Order.event(Seq, W);
      if (Write.Kind != EventKind::SmemWrite || !Write.Dst.resolved() ||
          !Sources.count(Write.Dst.Buffer) || Reported.count(Seq.Steps[W].Event))
        continue;
      std::vector<Earlier> Back = Order.before(Seq, W);
      // A ring of staging buffers is reused several iterations later: look that far back in
      // the innermost loop too.
      const llvm::SmallVector<unsigned, 3> &Loops = Seq.Steps[W].Loops;
      if (!Loops.empty()) {
        auto [Begin, End] = Order.body(Seq, Loops.back(), W);
        for (unsigned D = 2; D <= MaxRingDistance; ++D)
          for (unsigned J = End; J-- > Begin;)
            if (Order.event(Seq, J).Kind == EventKind::AsyncStore &&
                Seq.Steps[J].Loops.size() == Loops.size())
              Back.push_back(Earlier{J, Loops.back(), D});
      }
      for (const Sample &S : Order.samplesAt(Seq, W)) {
        std::optional<SlotRef> Into = Order.place(Write.Dst, S);
        if (!Into)
          continue;
        for (const Earlier &E : Back) {
          const Event &Store = Order.event(Seq, E.Index);
          if (Store.Kind != EventKind::AsyncStore)
            continue;
          std::optional<Sample> T = Order.at(Seq, E, W, S);
          if (!T || !Order.runs(Seq, E.Index, *T).value_or(false) ||
              Order.place(Store.Src, *T) != std::optional<SlotRef>(Into))
            continue;
          const Event *Commit = nullptr, *Wait = nullptr;
          std::vector<unsigned> Between =
              E.Distance > 1 ? Order.between(Seq, E.Index, E.Previous, E.Distance, W)
                             : Order.between(Seq, E, W);
          Retired How = retired(Order, Seq, Between, Write, Commit, Wait);
          if (How != Retired::Yes) {
            // The writes of one role into one staging buffer (unrolled copies of one
            // statement) have one cause: say it once.
            Reported.insert(Seq.Steps[W].Event);
            if (!SaidFor.insert({&Seq, Into->Array}).second)
              break;
            const Buffer &Buf = P.Buffers[Into->Array];
            std::string Msg;
            llvm::raw_string_ostream OS(Msg);
            OS << Order.who(Seq, W) << " writes the TMA-store staging buffer " << Buf.Name;
            if (Buf.Slots > 1)
              OS << "[" << Into->Slot << "]";
            OS << " for " << Order.describe(S, Seq, W) << " while the store that reads it may still "
               << "be reading: "
               << (How == Retired::ForWaitersOnly
                       ? "the cp.async.bulk.wait_group.read that retires its bulk group is run "
                         "by " + describeThreads(possibleThreads(Wait->Threads)) +
                             " alone, and no barrier after it holds the other writing "
                             "threads back until it returned"
                   : Commit ? "no cp.async.bulk.wait_group.read retires its bulk group before "
                              "the write"
                            : "its bulk group is never committed and waited for")
               << ", so the store can send the new data instead of the old";
            Finding &F = Ctx.report(Severity::Error, Msg, Write);
            addNote(F, "the TMA store that reads " + Buf.Name, Store);
            if (Commit)
              addNote(F, "its bulk group is committed here", *Commit);
            if (How == Retired::ForWaitersOnly)
              addNote(F,
                      "the wait; a barrier of the waiting and the writing threads (bar.sync) "
                      "belongs between it and the write",
                      *Wait);
            else if (const Event *Place = waitPlace(Order, Seq, Between))
              addNote(F,
                      std::string("the wait would belong before this point: nothing ") +
                          (Commit ? "retires the store's bulk group"
                                  : "commits and retires the store's bulk group") +
                          " between the store and here, the first step of " +
                          Order.who(Seq, W) + " after it",
                      *Place);
            Reported.insert(Seq.Steps[W].Event);
          }
          break;
        }
        if (Reported.count(Seq.Steps[W].Event))
          break;
      }
    }
  storesAtExit(Ctx, Order);
}
