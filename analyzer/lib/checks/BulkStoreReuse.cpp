//===- BulkStoreReuse.cpp - a TMA-store staging buffer rewritten too early ---------===//
//
// A TMA store (cp.async.bulk.tensor shared -> global) reads its shared-memory source
// asynchronously. The source may be written again only after the store's bulk group was
// committed (cp.async.bulk.commit_group) and a cp.async.bulk.wait_group{.read} N retired it:
// N groups may stay pending, so the group is retired once N newer groups were committed
// before the wait. For each write into a store's source buffer the check walks back to the
// nearest store from the same buffer and slot (this iteration, the previous one, earlier
// loops) and counts the commits and waits in between.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// Iterations back a staging ring is searched for the store that last read a slot.
constexpr unsigned MaxRingDistance = 8;

bool isSync(const Event &E, models::SyncKind K) { return E.Sync && *E.Sync == K; }

/// Whether the bulk group of the store is retired by a wait among Between.
bool retired(const StageOrder &Order, const Sequence &Seq, const std::vector<unsigned> &Between,
             const Event *&Commit) {
  unsigned Commits = 0;
  for (unsigned J : Between) {
    const Event &E = Order.event(Seq, J);
    if (isSync(E, models::SyncKind::BulkCommitGroup)) {
      if (!Commits)
        Commit = &E;
      ++Commits;
    }
    if (isSync(E, models::SyncKind::BulkWaitGroup) && Commits > 0) {
      std::optional<uint64_t> N = E.WaitN.constant();
      if (N && Commits - 1 >= *N)
        return true;
    }
  }
  return false;
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
          const Event *Commit = nullptr;
          std::vector<unsigned> Between =
              E.Distance > 1 ? Order.between(Seq, E.Index, E.Previous, E.Distance, W)
                             : Order.between(Seq, E, W);
          if (!retired(Order, Seq, Between, Commit)) {
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
               << (Commit ? "no cp.async.bulk.wait_group.read retires its bulk group before "
                            "the write"
                          : "its bulk group is never committed and waited for")
               << ", so the store can send the new data instead of the old";
            Finding &F = Ctx.report(Severity::Error, Msg, Write);
            addNote(F, "the TMA store that reads " + Buf.Name, Store);
            if (Commit)
              addNote(F, "its bulk group is committed here", *Commit);
            if (const Event *Place = waitPlace(Order, Seq, Between))
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
}
