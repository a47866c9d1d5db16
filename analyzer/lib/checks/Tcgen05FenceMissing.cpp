//===- Tcgen05FenceMissing.cpp - tcgen05 work ordered across threads without its fences -===//
//
// tcgen05.mma, .cp, .shift, .ld and .st are asynchronous: a thread synchronization (an
// mbarrier arrive and wait, bar.sync, barrier.cluster) orders them between threads only
// through the tcgen05 fences (PTX ISA 9.7.16.6.4, "Canonical synchronization patterns"):
//
//   thread A: tcgen05.ld; tcgen05.wait::ld; tcgen05.fence::before_thread_sync; arrive
//   thread B: wait;       tcgen05.fence::after_thread_sync;  tcgen05.mma
//
// tcgen05.commit stands for A's fence (its arrive is ordered after the MMAs it tracks), so
// the epilogue of `mma; commit [acc_full]` still needs B's fence between its wait and its
// tcgen05.ld. The same holds for the TMEM address of tcgen05.alloc and for tcgen05.dealloc.
//
// The check pairs TMEM accesses X (thread A) and Y (thread B, another warp) that conflict
// (not two loads) and that a synchronization orders: a release R after X (arrive, commit,
// bar.sync, barrier.cluster.arrive) and an acquire S before Y (wait, the same bar.sync, the
// matching barrier.cluster.wait) on the same barrier. The pair is fenced when some such chain
// has A's fence between X and R (or R is a commit of X, or A waited for X's commit first) and
// B's fence between S and Y. A pair with chains but no fenced one is reported, at Y when the
// after fence is what is missing, else at R. Before a free, A's tcgen05.ld or .st must also be
// waited for (tcgen05.wait::ld, ::st) ahead of its fence, or the fence orders only the issue;
// reading a load's registers needs no wait (9.7.16.6.4.5). A warp's ld and st reach only its
// lane quarter (warp id % 4), so two warps' loads and stores conflict only within one quarter.
// Phases are not compared: a chain through a barrier counts whichever phase it completes
// (only a thread's own wait that comes before its arrive, and passes of one barrier id
// outside loops, are told apart); a chain through the next or the previous iteration of a
// loop counts only where no chain within one iteration exists.
//
// A read of the TMEM address that tcgen05.alloc writes to shared memory needs only the
// barrier (the fences order the accesses that use it): one by another warp that no
// synchronization after the alloc precedes is an error, as it may read the word unwritten.
//
// Otherwise a warning, as mbarrier-init-visibility's missing fence.mbarrier_init within a
// CTA: the ISA does not order the accesses, so they may race, but CUTLASS-style kernels fence
// and Triton 3.9's output has no tcgen05 fence at all, which is not known to fail on
// hardware. A stage-safety proof still gives way to it (yieldToRaceFindings): the model takes
// the order the fences would give.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <set>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

/// How an event touches tensor memory, for the order the fences must give; Address is the
/// read of the shared word tcgen05.alloc writes the TMEM address into.
enum class Access : uint8_t { None, Alloc, Write, Read, Free, Address };

Access accessOf(const Event &E) {
  switch (E.Kind) {
  case EventKind::Alloc:
    return Access::Alloc;
  case EventKind::Dealloc:
    return Access::Free;
  case EventKind::TmemLoad:
    return Access::Read;
  case EventKind::TmemStore:
    return Access::Write;
  case EventKind::Mma:
    return isSync(E, models::SyncKind::Tcgen05Mma) ? Access::Write : Access::None;
  case EventKind::SmemRead:
    return E.Src.AllocWord ? Access::Address : Access::None;
  default:
    return Access::None;
  }
}

/// Two loads may run in any order; every other pair needs one. The address word is written by
/// the allocation alone.
bool conflict(Access X, Access Y) {
  if (X == Access::Address || Y == Access::Address)
    return X == Access::Alloc && Y == Access::Address;
  return !(X == Access::Read && Y == Access::Read);
}

/// tcgen05.commit tracks the MMAs, copies and shifts of its thread; loads and stores end
/// with tcgen05.wait::ld / ::st instead.
bool committable(const Event &X) {
  return isSync(X, models::SyncKind::Tcgen05Mma) || isSync(X, models::SyncKind::Tcgen05Cp) ||
         isSync(X, models::SyncKind::Tcgen05Shift);
}

/// Warps a thread set may cover; std::nullopt when it is unknown.
std::optional<std::set<unsigned>> warpsOf(const ThreadSet &T) {
  if (T.isUnknown())
    return std::nullopt;
  std::set<unsigned> W;
  llvm::BitVector B = possibleThreads(T);
  for (int I = B.find_first(); I >= 0; I = B.find_next(I))
    W.insert(static_cast<unsigned>(I) / 32);
  return W;
}

/// A barrier a release and an acquire must share: an mbarrier array, a named barrier id,
/// or one instance of a CTA-wide or cluster barrier.
using SyncKey = std::pair<uint8_t, uint64_t>;
enum : uint8_t { MbarrierKey, NamedKey, CtaKey, ClusterKey };

struct Link {
  unsigned Access = 0; ///< the TMEM access (Protocol::Events)
  unsigned Sync = 0;   ///< the release or the acquire
  const Sequence *Seq = nullptr;
  unsigned Step = 0;   ///< the access's step in Seq
  unsigned SyncStep = 0;
  SyncKey Key;
  bool Fenced = false;
  /// Release side: a tcgen05.ld (st) was waited for (tcgen05.wait::ld, ::st) before the fence.
  bool Waited = true;
  /// The access and the synchronization are in one iteration of the loops around both: a
  /// release in the next iteration orders every access but the last one's, an acquire in the
  /// previous iteration every access but the first one's.
  bool SameIteration = true;
};

/// What the walk from a TMEM access to a release found between them.
struct ReleaseOrder {
  bool Fenced = false;
  bool Waited = true;
};

class FenceCheck {
public:
  explicit FenceCheck(CheckContext &Ctx) : Ctx(Ctx), P(Ctx.protocol()), Order(P) {
    std::vector<EventSite> Sites = eventSites(P);
    std::vector<std::optional<uint64_t>> Keys = ctaBarrierKeys(P, Sites);
    for (size_t I = 0; I < Sites.size(); ++I)
      if (Keys[I])
        CtaKeys[Sites[I].Index] = *Keys[I];
    for (const NamedBarrierUse &U : namedBarrierUses(P, Sites).Uses)
      NamedIds[U.Site->Index].insert(U.Id);
  }

  void run() {
    for (const Sequence &Seq : Order.sequences())
      for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
        collectReleases(Seq, I);
        collectAcquires(Seq, I);
      }
    report();
  }

private:
  /// The barriers step I of Seq releases (Acquire false) or acquires.
  std::vector<SyncKey> keys(const Sequence &Seq, unsigned I, bool Acquire) const {
    const unsigned Idx = Seq.Steps[I].Event;
    const Event &E = P.Events[Idx];
    std::vector<SyncKey> Out;
    switch (E.Kind) {
    case EventKind::Arrive:
    case EventKind::ArriveExpectTx:
    case EventKind::MmaCommit:
      if (!Acquire && E.Barrier.resolved())
        Out.push_back({MbarrierKey, E.Barrier.Array});
      break;
    case EventKind::Wait:
    case EventKind::Probe:
      if (Acquire && E.Barrier.resolved())
        Out.push_back({MbarrierKey, E.Barrier.Array});
      break;
    case EventKind::NamedBarrier:
      // bar.arrive only releases; bar.sync and bar.red do both.
      if (Acquire && isSync(E, models::SyncKind::BarrierArrive))
        break;
      if (auto It = CtaKeys.find(Idx); It != CtaKeys.end())
        Out.push_back({CtaKey, It->second});
      else if (auto Ids = NamedIds.find(Idx); Ids != NamedIds.end())
        for (uint64_t Id : Ids->second)
          Out.push_back({NamedKey, Id});
      break;
    case EventKind::ClusterWait:
      if (Acquire)
        Out.push_back({ClusterKey, Idx});
      break;
    case EventKind::ClusterArrive:
      // barrier.cluster.arrive pairs with the wait of the same cluster_sync: the next one.
      if (!Acquire)
        for (unsigned J = I + 1; J < Seq.Steps.size(); ++J)
          if (Order.event(Seq, J).Kind == EventKind::ClusterWait) {
            Out.push_back({ClusterKey, Seq.Steps[J].Event});
            break;
          }
      break;
    default:
      break;
    }
    return Out;
  }

  /// Whether X, an access of Seq, is ordered before the release at step R by its threads:
  /// a tcgen05.fence::before_thread_sync of theirs comes between, or (an MMA or copy) a
  /// commit of it that they then waited on; and, for a tcgen05.ld or .st, whether their
  /// tcgen05.wait::ld (::st) came before that fence, which only then orders the access's end
  /// and not just its issue (PTX ISA 9.7.16.6.4.4). Steps are those `between` gives.
  ReleaseOrder releaseOrder(const Event &X, const std::vector<unsigned> &Between,
                            const Sequence &Seq, const Event &R) const {
    if (R.Kind == EventKind::MmaCommit)
      return {true, true};
    const bool Tracked = committable(X);
    const char *WaitFor = X.Kind == EventKind::TmemLoad ? "ld"
                          : isSync(X, models::SyncKind::Tcgen05St) ? "st"
                                                                   : nullptr;
    bool Waited = !WaitFor, Fenced = false;
    std::set<unsigned> Committed; // barrier arrays a commit of X's threads completes
    for (unsigned J : Between) {
      const Event &E = Order.event(Seq, J);
      if (!overlaps(E.Threads, X.Threads))
        continue;
      if (WaitFor && E.Kind == EventKind::TmemWait && E.Detail == WaitFor)
        Waited = true;
      // A fence before the wait still leaves a later one after it to find.
      if (isSync(E, models::SyncKind::Tcgen05FenceBeforeThreadSync)) {
        if (Waited)
          return {true, true};
        Fenced = true;
      }
      if (Tracked && E.Kind == EventKind::MmaCommit && E.Barrier.resolved())
        Committed.insert(E.Barrier.Array);
      if (E.Kind == EventKind::Wait && E.Barrier.resolved() && Committed.count(E.Barrier.Array))
        return {true, true};
    }
    return {Fenced, false};
  }

  void collectReleases(const Sequence &Seq, unsigned I) {
    std::vector<SyncKey> Ks = keys(Seq, I, /*Acquire=*/false);
    if (Ks.empty())
      return;
    const Event &R = Order.event(Seq, I);
    for (const Earlier &E : Order.before(Seq, I)) {
      const Event &X = Order.event(Seq, E.Index);
      Access A = accessOf(X);
      if (A == Access::None || A == Access::Free || A == Access::Address ||
          !overlaps(X.Threads, R.Threads))
        continue;
      if (R.Kind == EventKind::MmaCommit && !committable(X))
        continue;
      ReleaseOrder RO = releaseOrder(X, Order.between(Seq, E, I), Seq, R);
      for (const SyncKey &K : Ks)
        Releases.push_back(Link{Seq.Steps[E.Index].Event, Seq.Steps[I].Event, &Seq, E.Index, I,
                                K, RO.Fenced, RO.Waited, E.Previous == NoIndex});
    }
  }

  void collectAcquires(const Sequence &Seq, unsigned I) {
    const Event &Y = Order.event(Seq, I);
    Access A = accessOf(Y);
    if (A == Access::None || A == Access::Alloc)
      return;
    for (const Earlier &E : Order.before(Seq, I)) {
      const Event &S = Order.event(Seq, E.Index);
      if (!overlaps(S.Threads, Y.Threads))
        continue;
      std::vector<SyncKey> Ks = keys(Seq, E.Index, /*Acquire=*/true);
      if (Ks.empty())
        continue;
      bool Fenced = false;
      for (unsigned J : Order.between(Seq, E, I)) {
        const Event &F = Order.event(Seq, J);
        if (isSync(F, models::SyncKind::Tcgen05FenceAfterThreadSync) &&
            overlaps(F.Threads, Y.Threads)) {
          Fenced = true;
          break;
        }
      }
      for (const SyncKey &K : Ks)
        Acquires.push_back(Link{Seq.Steps[I].Event, Seq.Steps[E.Index].Event, &Seq, I, E.Index, K,
                                Fenced, true, E.Previous == NoIndex});
    }
  }

  /// Whether X and Y may touch the same tensor memory from different warps (a warp's own
  /// accesses are ordered by tcgen05.wait and commits, not by these fences). A warp's
  /// tcgen05.ld and tcgen05.st reach only the 32 TMEM lanes of its quarter (warp id % 4), so
  /// two of them conflict only between warps of one quarter; an MMA, a copy, the allocation
  /// and the free cover every lane.
  bool acrossWarps(unsigned IX, unsigned IY) {
    const Event &X = P.Events[IX], &Y = P.Events[IY];
    const std::optional<std::set<unsigned>> &WX = warps(IX), &WY = warps(IY);
    if (!WX || !WY || WX->empty() || WY->empty())
      return false;
    if (laneLocal(X) && laneLocal(Y)) {
      for (unsigned A : *WX)
        for (unsigned B : *WY)
          if (A != B && A % 4 == B % 4)
            return true;
      return false;
    }
    return !(WX->size() == 1 && *WX == *WY);
  }
  /// warpsOf an event's threads, once per event.
  const std::optional<std::set<unsigned>> &warps(unsigned I) {
    auto It = Warps.find(I);
    if (It == Warps.end())
      It = Warps.emplace(I, warpsOf(P.Events[I].Threads)).first;
    return It->second;
  }
  static bool laneLocal(const Event &E) {
    return isSync(E, models::SyncKind::Tcgen05Ld) || isSync(E, models::SyncKind::Tcgen05St);
  }

  /// The chains of one pair of accesses (X, Y): the first fenced one ends the search.
  struct Pair {
    const Link *Rel = nullptr, *Acq = nullptr; // an unfenced chain, the one reported
    bool RelOk = false;                         // its release side is in order
    // Fenced chains, those with access and synchronization in one iteration on both sides
    // (which order every iteration's pair: the fences order all that follows or precedes
    // them) and the others (which leave the first or the last iteration out).
    bool Fenced = false, FencedPart = false, AnyWhole = false;
    bool any() const { return Rel || Fenced || FencedPart; }
  };
  using PairMap = std::map<std::pair<unsigned, unsigned>, Pair>;

  /// Reads of the TMEM address by warps that did not allocate, with no synchronization at
  /// all after the allocation: they may read the word before tcgen05.alloc wrote it.
  void reportUnsynchronized(const PairMap &Pairs) {
    for (const Sequence &Seq : Order.sequences())
      for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
        const unsigned IY = Seq.Steps[I].Event;
        if (accessOf(P.Events[IY]) != Access::Address || SaidAt.count(IY))
          continue;
        for (unsigned IX = 0; IX < P.Events.size(); ++IX) {
          if (accessOf(P.Events[IX]) != Access::Alloc || !acrossWarps(IX, IY))
            continue;
          auto It = Pairs.find({IX, IY});
          if (It != Pairs.end() && It->second.any())
            continue;
          SaidAt.insert(IY);
          const Event &Y = P.Events[IY], &X = P.Events[IX];
          Finding &F = Ctx.report(
              Severity::Error,
              who(Seq, I) + " reads the TMEM address that tcgen05.alloc writes to shared "
                            "memory with no synchronization between the allocating warp (" +
                  describeThreads(possibleThreads(X.Threads), false) +
                  ") and its threads after the alloc, so it may read the word before it is "
                  "written: tcgen05.fence::before_thread_sync, a barrier of both and "
                  "tcgen05.fence::after_thread_sync belong between (PTX ISA, tcgen05 "
                  "canonical synchronization patterns)",
              Y);
          addNote(F, "the tcgen05.alloc", X);
          break;
        }
      }
  }

  void report() {
    PairMap Pairs;
    std::multimap<SyncKey, const Link *> ByKey;
    for (const Link &R : Releases)
      ByKey.emplace(R.Key, &R);
    for (const Link &A : Acquires) {
      const Event &Y = P.Events[A.Access];
      for (auto [It, End] = ByKey.equal_range(A.Key); It != End; ++It) {
        const Link &R = *It->second;
        const Event &X = P.Events[R.Access];
        if (R.Access == A.Access || !conflict(accessOf(X), accessOf(Y)) ||
            !acrossWarps(R.Access, A.Access))
          continue;
        // The free must follow a barrier of the whole CTA (tmem-dealloc-early says where
        // none does); only such a barrier's fences are this check's to judge.
        if (accessOf(Y) == Access::Free && A.Key.first != CtaKey && A.Key.first != ClusterKey)
          continue;
        Pair &Pr = Pairs[{R.Access, A.Access}];
        if (Pr.Fenced || !mayFollow(R, A))
          continue;
        const bool Whole = R.SameIteration && A.SameIteration;
        Pr.AnyWhole |= Whole;
        // A free needs the loads and stores before it finished, not only issued: the ISA's
        // pattern waits (tcgen05.wait::ld) before the fence. Other overwrites of what a load
        // still reads are accumulator-early-read's.
        // Reading the address word is a generic load: the barrier alone orders it after the
        // allocation's write (the fences are for the TMEM accesses that use the address).
        const bool Plain = accessOf(Y) == Access::Address;
        auto Released = [&](const Link &L) {
          return Plain || (L.Fenced && (L.Waited || accessOf(Y) != Access::Free));
        };
        if (Released(R) && (Plain || A.Fenced)) {
          (Whole ? Pr.Fenced : Pr.FencedPart) = true;
          continue;
        }
        // Prefer a chain within one iteration, then one with one side in order (the other
        // side is the one to fix), then one whose release is fenced (a missing wait::ld is
        // then what to fix), then synchronizations that all of X's and Y's threads run, then
        // the release nearest after X and the acquire nearest before Y: where a fence goes.
        auto Score = [&](const Link *Rl, const Link *Ac) {
          const Event &Rs = P.Events[Rl->Sync], &Sa = P.Events[Ac->Sync];
          return std::make_tuple(Rl->SameIteration && Ac->SameIteration,
                                 Released(*Rl) + Ac->Fenced, Rl->Fenced,
                                 coveredBy(X.Threads, Rs.Threads) +
                                     coveredBy(Y.Threads, Sa.Threads),
                                 -static_cast<int>(Rl->SyncStep), static_cast<int>(Ac->SyncStep));
        };
        if (!Pr.Rel || Score(&R, &A) > Score(Pr.Rel, Pr.Acq))
          Pr.Rel = &R, Pr.Acq = &A, Pr.RelOk = Released(R);
      }
    }
    reportUnsynchronized(Pairs);
    for (auto &[Key, Pr] : Pairs) {
      // Fenced, or no chain can order the two; chains of other iterations suffice where the
      // two meet only across iterations.
      if (Pr.Fenced || !Pr.Rel || (Pr.FencedPart && !Pr.AnyWhole))
        continue;
      if (Pr.RelOk)
        reportAcquire(*Pr.Rel, *Pr.Acq);
      else
        reportRelease(*Pr.Rel, *Pr.Acq);
    }
  }

  /// Whether the acquire can observe the release. A thread that runs both must run the
  /// release first: in B6 the MMA warp's wait on acc_empty comes before its own arrive on it
  /// in the epilogue, so that arrive orders nothing before its MMAs.
  bool mayFollow(const Link &Rel, const Link &Acq) {
    const Event &R = P.Events[Rel.Sync], &S = P.Events[Acq.Sync];
    if (Rel.Sync == Acq.Sync)
      return true;
    // Two instructions of one barrier id outside loops meet only as the same pass: the
    // default warps' last `barrier.sync 1` of a Triton kernel is not the one that let the
    // workers start.
    if (Rel.Key.first == NamedKey || Rel.Key.first == CtaKey) {
      std::optional<unsigned> NR = pass(*Rel.Seq, Rel.SyncStep, Rel.Key),
                              NS = pass(*Acq.Seq, Acq.SyncStep, Acq.Key);
      if (NR && NS && *NR != *NS)
        return false;
    }
    if (!overlaps(R.Threads, S.Threads))
      return true;
    auto Key = std::make_tuple(Rel.Sync, Acq.Sync);
    if (auto It = Follows.find(Key); It != Follows.end())
      return It->second;
    bool Out = true;
    for (const Sequence *Seq : {Rel.Seq, Acq.Seq}) {
      std::vector<unsigned> Rs, Ss;
      for (unsigned I = 0; I < Seq->Steps.size(); ++I) {
        if (Seq->Steps[I].Event == Rel.Sync)
          Rs.push_back(I);
        if (Seq->Steps[I].Event == Acq.Sync)
          Ss.push_back(I);
      }
      if (Rs.empty() || Ss.empty())
        continue;
      Out = false;
      for (unsigned IS : Ss)
        for (const Earlier &E : Order.before(*Seq, IS))
          Out |= llvm::is_contained(Rs, E.Index);
      break;
    }
    return Follows[Key] = Out;
  }

  /// Which pass of barrier Key step I of Seq is (0 for the first), counting the steps of
  /// Seq that pass it; std::nullopt when a loop repeats one of them.
  std::optional<unsigned> pass(const Sequence &Seq, unsigned I, const SyncKey &Key) {
    auto CacheKey = std::make_tuple(&Seq, I, Key);
    if (auto It = Passes.find(CacheKey); It != Passes.end())
      return It->second;
    std::optional<unsigned> N = 0;
    for (unsigned J = 0; J <= I && N; ++J) {
      if (!llvm::is_contained(keys(Seq, J, /*Acquire=*/false), Key))
        continue;
      if (!Seq.Steps[J].Loops.empty())
        N = std::nullopt;
      else if (J < I)
        ++*N;
    }
    return Passes[CacheKey] = N;
  }

  /// `the mma role`, `the epilogue`.
  std::string who(const Sequence &Seq, unsigned I) const {
    const Step &St = Seq.Steps[I];
    return Order.who(Seq, I) + (St.InEpilogue || St.InPrologue || !Seq.R ? "" : " role");
  }
  std::string who(const Link &L) const { return who(*L.Seq, L.Step); }

  std::string what(const Event &E) const {
    switch (accessOf(E)) {
    case Access::Alloc:
      return "tcgen05.alloc";
    case Access::Free:
      return "tcgen05.dealloc";
    case Access::Read:
      return "tcgen05.ld";
    default:
      return E.Kind == EventKind::Mma ? "tcgen05.mma" : "tcgen05." + E.Detail;
    }
  }
  std::string syncName(const Event &S) const {
    if (S.Barrier.resolved())
      return (S.Kind == EventKind::Wait || S.Kind == EventKind::Probe ? "the wait on "
                                                                      : "the arrive on ") +
             Order.name(S.Barrier);
    return S.Opcode.empty() ? std::string("the barrier") : S.Opcode;
  }

  /// The acquire side lacks tcgen05.fence::after_thread_sync: said at the access, once per
  /// synchronization and accessing role.
  void reportAcquire(const Link &Rel, const Link &Acq) {
    if (!SaidAcquire.insert({Acq.Sync, who(Acq)}).second || !SaidAt.insert(Acq.Access).second)
      return;
    const Event &Y = P.Events[Acq.Access], &S = P.Events[Acq.Sync];
    const Event &X = P.Events[Rel.Access], &R = P.Events[Rel.Sync];
    Finding &F = Ctx.report(
        Severity::Warning,
        who(Acq) + " issues " + what(Y) + " after " + syncName(S) +
            " with no tcgen05.fence::after_thread_sync between them, so nothing orders it "
            "after the " + what(X) + " by " + who(Rel) + " that this synchronization waits "
            "for (PTX ISA, tcgen05 canonical synchronization patterns); the fence belongs right "
            "after the synchronization",
        Y);
    addNote(F, "the synchronization the fence must follow", S);
    addNote(F, "the " + what(X) + " by " + who(Rel) + " it must come after", X);
    addNote(F, R.Kind == EventKind::MmaCommit ? "committed here" : "released here", R);
  }

  /// The release side lacks tcgen05.fence::before_thread_sync: said at the release, once per
  /// accessing role.
  void reportRelease(const Link &Rel, const Link &Acq) {
    if (!SaidRelease.insert({Rel.Sync, who(Rel)}).second)
      return;
    const Event &Y = P.Events[Acq.Access], &S = P.Events[Acq.Sync];
    const Event &X = P.Events[Rel.Access], &R = P.Events[Rel.Sync];
    const std::string Sync = R.Barrier.resolved() ? syncName(R) : R.Opcode;
    std::string Msg =
        Rel.Fenced
            ? "the " + what(X) + " by " + who(Rel) + " reaches " + Sync +
                  " with no tcgen05.wait::" + (X.Kind == EventKind::TmemLoad ? "ld" : "st") +
                  " between it and its tcgen05.fence::before_thread_sync, so the fence orders "
                  "only its issue and the " + what(Y) + " by " + who(Acq) +
                  " behind this synchronization may free columns it still accesses (PTX ISA, "
                  "tcgen05 canonical synchronization patterns); the wait belongs before the fence"
            : "the " + what(X) + " by " + who(Rel) + " reaches " + Sync +
                  " with no tcgen05.fence::before_thread_sync between them, so nothing orders it "
                  "before the " + what(Y) + " by " + who(Acq) +
                  " behind this synchronization (PTX ISA, tcgen05 canonical synchronization "
                  "patterns); the fence belongs right before the synchronization";
    if (!Acq.Fenced)
      Msg += ", and a tcgen05.fence::after_thread_sync after it on the other side";
    Finding &F = Ctx.report(Severity::Warning, Msg, R);
    addNote(F, "the " + what(X) + " by " + who(Rel), X);
    addNote(F, "the " + what(Y) + " by " + who(Acq) + " behind " + syncName(S), Y);
  }

  CheckContext &Ctx;
  const Protocol &P;
  StageOrder Order;
  std::map<unsigned, uint64_t> CtaKeys;
  std::map<unsigned, std::set<uint64_t>> NamedIds;
  std::vector<Link> Releases, Acquires;
  /// What was said: per synchronization and the role (or prologue, epilogue) of the access,
  /// once per access on the acquire side.
  std::set<std::pair<unsigned, std::string>> SaidAcquire, SaidRelease;
  std::set<unsigned> SaidAt;
  std::map<std::tuple<unsigned, unsigned>, bool> Follows;
  std::map<unsigned, std::optional<std::set<unsigned>>> Warps;
  std::map<std::tuple<const Sequence *, unsigned, SyncKey>, std::optional<unsigned>> Passes;
};

} // namespace

void wsv::analyzer::checks::Tcgen05FenceMissing(CheckContext &Ctx) {
  bool AnyTmem = false;
  for (const Event &E : Ctx.protocol().Events)
    AnyTmem |= accessOf(E) != Access::None;
  if (AnyTmem)
    FenceCheck(Ctx).run();
}
