//===- BarrierTraffic.cpp - unrolling the protocol's barrier events per CTA and slot ---===//
#include "BarrierTraffic.h"

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

namespace {

/// Events one expansion may run at most: a persistent kernel at the sampled sizes runs a few
/// thousand; far more means a closed form the samples did not bound.
constexpr uint64_t MaxEventsPerExpansion = 400000;

bool isBarrierEvent(const Event &E) {
  switch (E.Kind) {
  case EventKind::Init:
  case EventKind::Arrive:
  case EventKind::ArriveExpectTx:
  case EventKind::ExpectTx:
  case EventKind::CompleteTx:
  case EventKind::Wait:
  case EventKind::Probe:
  case EventKind::CpAsyncArrive:
  case EventKind::MmaCommit:
  case EventKind::TryCancel:
    return E.Barrier.present();
  case EventKind::AsyncLoad:
    return E.Barrier.present();
  default:
    return false;
  }
}

/// Unrolls one assignment for one CTA rank.
class Expander {
public:
  Expander(const Protocol &P, const Assignment &A, unsigned Cta,
           std::map<std::tuple<unsigned, unsigned, unsigned>, SlotTraffic> &Slots,
           std::string &Unknown, unsigned &UnknownEvent, std::set<unsigned> &OutsideCluster)
      : P(P), A(A), Cta(Cta), Slots(Slots), Unknown(Unknown), UnknownEvent(UnknownEvent),
        OutsideCluster(OutsideCluster) {}

  void run() {
    walk(P.Prologue, PrologueOwner);
    for (unsigned R = 0; R < P.Roles.size() && Unknown.empty(); ++R) {
      const Role &Ro = P.Roles[R];
      std::optional<bool> When = condition(Ro.When);
      if (!When) {
        fail("the condition of role " + Ro.Name + " could not be evaluated", NoIndex);
        return;
      }
      if (*When)
        walk(Ro.Body, R);
    }
    if (Unknown.empty())
      walk(P.Epilogue, EpilogueOwner);
  }

private:
  const Protocol &P;
  const Assignment &A;
  unsigned Cta;
  std::map<std::tuple<unsigned, unsigned, unsigned>, SlotTraffic> &Slots;
  std::string &Unknown;
  unsigned &UnknownEvent;
  std::set<unsigned> &OutsideCluster;
  llvm::DenseMap<uint64_t, uint64_t> Iterations; ///< LoopId -> current iteration
  /// The thread an expression is evaluated for, when it depends on the thread.
  std::optional<uint64_t> Tid;
  uint64_t Stamp = 0, NextStamp = 1, Seq = 0, Executed = 0;

  void fail(std::string Why, unsigned Event) {
    if (!Unknown.empty())
      return;
    Unknown = std::move(Why);
    UnknownEvent = Event;
  }

  std::optional<uint64_t> leaf(const Expr *E) const {
    switch (E->kind()) {
    case ExprKind::Constant:
      return E->payload();
    case ExprKind::Param: {
      auto It = A.Params.find(E->name());
      if (It == A.Params.end())
        return std::nullopt;
      return It->second;
    }
    case ExprKind::IterationVar: {
      auto It = Iterations.find(E->payload());
      if (It == Iterations.end())
        return std::nullopt;
      return It->second;
    }
    case ExprKind::SpecialReg:
      switch (E->specialRegister()) {
      case SpecialRegister::ClusterCtaRank:
      case SpecialRegister::CtaidX:
      case SpecialRegister::ClusterCtaidX:
        return Cta;
      case SpecialRegister::ClusterNctaRank:
      case SpecialRegister::ClusterNctaidX:
        return A.ClusterSize;
      case SpecialRegister::NctaidX:
        return A.NctaidX;
      case SpecialRegister::TidX:
        return Tid;
      case SpecialRegister::LaneId:
        return Tid ? std::optional<uint64_t>(*Tid % 32) : std::nullopt;
      case SpecialRegister::TidY:
      case SpecialRegister::TidZ:
        return Tid ? std::optional<uint64_t>(0) : std::nullopt;
      case SpecialRegister::CtaidY:
      case SpecialRegister::CtaidZ:
      case SpecialRegister::ClusteridX:
      case SpecialRegister::ClusteridY:
      case SpecialRegister::ClusteridZ:
      case SpecialRegister::ClusterCtaidY:
      case SpecialRegister::ClusterCtaidZ:
        return 0;
      case SpecialRegister::NctaidY:
      case SpecialRegister::NctaidZ:
      case SpecialRegister::ClusterNctaidY:
      case SpecialRegister::ClusterNctaidZ:
      case SpecialRegister::NclusteridY:
      case SpecialRegister::NclusteridZ:
        return 1;
      case SpecialRegister::NclusteridX:
        return A.NctaidX / std::max(1u, A.ClusterSize);
      default:
        return std::nullopt;
      }
    default:
      return std::nullopt;
    }
  }

  std::optional<uint64_t> eval(const Expr *E) const {
    if (!E)
      return std::nullopt;
    return ExprContext::evaluate(E, [&](const Expr *L) { return leaf(L); });
  }
  std::optional<uint64_t> eval(const ProtocolValue &V) const { return eval(V.E); }
  /// Absent conditions hold; unknown ones are nullopt.
  std::optional<bool> condition(const ProtocolValue &V) const {
    if (V.absent())
      return true;
    std::optional<uint64_t> X = eval(V);
    if (!X)
      return std::nullopt;
    return *X != 0;
  }

  bool holdsBarrierEvent(const std::vector<ProtocolItem> &Items) const {
    for (const ProtocolItem &I : Items)
      if (I.isEvent() ? isBarrierEvent(P.Events[I.Index]) : holdsBarrierEvent(P.loop(I).Body))
        return true;
    return false;
  }

  void walk(const std::vector<ProtocolItem> &Items, unsigned Owner) {
    for (const ProtocolItem &I : Items) {
      if (!Unknown.empty())
        return;
      if (I.isEvent()) {
        event(I.Index, Owner);
        continue;
      }
      const ProtocolLoop &L = P.loop(I);
      // A loop without barrier traffic adds nothing to count, however often it runs: a
      // consumer's per-thread loop over its words of a stage (clang's ws_cluster), whose
      // trip count depends on the thread, need not be evaluated.
      if (!holdsBarrierEvent(L.Body))
        continue;
      std::optional<bool> When = condition(L.When);
      std::optional<uint64_t> Trip = eval(L.Trip);
      if (!When || (*When && !Trip)) {
        fail("the trip count of the loop at ptx line " + std::to_string(L.Where.PtxLine) +
                 " could not be evaluated" +
                 (L.Trip.Unknown.empty() ? std::string() : ": " + L.Trip.Unknown),
             NoIndex);
        return;
      }
      if (!*When)
        continue;
      // A trip count that wraps below zero is a loop the guard skips in the real kernel.
      if (*Trip > (1u << 20)) {
        fail("a loop at ptx line " + std::to_string(L.Where.PtxLine) + " runs " +
                 std::to_string(*Trip) + " times for " + A.describe(P),
             NoIndex);
        return;
      }
      uint64_t SavedStamp = Stamp;
      for (uint64_t It = 0; It < *Trip && Unknown.empty(); ++It) {
        Iterations[L.Loop] = It;
        Stamp = NextStamp++;
        walk(L.Body, Owner);
      }
      Iterations.erase(L.Loop);
      Stamp = SavedStamp;
    }
  }

  SlotTraffic &slot(unsigned TargetCta, unsigned Array, unsigned Slot) {
    SlotTraffic &S = Slots[{TargetCta, Array, Slot}];
    S.Cta = TargetCta;
    S.Array = Array;
    S.Slot = Slot;
    return S;
  }

  /// Runs an event once per group of its threads that reach the same slot: per-consumer
  /// barriers (`mma2ld[tid / 128]`) are one slot per warpgroup.
  void event(unsigned Index, unsigned Owner) {
    const Event &E = P.Events[Index];
    if (!isBarrierEvent(E))
      return;
    if (!threadDependent(E.Barrier.Slot.E) && !threadDependent(E.Parity.E)) {
      Tid.reset();
      std::optional<unsigned> Count = E.Threads.count();
      std::string Key = E.Threads.str();
      // An event every role runs (a wait all threads pass) appears in each role's sequence:
      // each role runs it with its own threads.
      if (Owner < P.Roles.size() && E.Threads.elected().empty() && E.Threads.members().any()) {
        const ThreadSet &R = P.Roles[Owner].Threads;
        if (!R.isUnknown() && R.elected().empty() &&
            R.members().size() == E.Threads.members().size()) {
          llvm::BitVector Mine = E.Threads.members();
          Mine &= R.members();
          if (Mine.count() != E.Threads.members().count()) {
            Count = Mine.count();
            Key += " of the " + P.Roles[Owner].Name;
          }
        }
      }
      eventFor(Index, Owner, Count, Key);
      return;
    }
    // One representative thread per member and per elected warp, grouped by slot.
    std::vector<uint64_t> Reps;
    for (unsigned T : E.Threads.members().set_bits())
      Reps.push_back(T);
    for (const ThreadSet::ElectedGroup &G : E.Threads.elected())
      for (unsigned W : G.Warps)
        Reps.push_back(W * 32);
    if (Reps.empty() || E.Threads.isUnknown()) {
      fail("the slot of `" + E.Opcode + "` depends on threads that are not known", Index);
      return;
    }
    std::map<std::pair<uint64_t, uint64_t>, std::pair<unsigned, uint64_t>> Groups;
    for (uint64_t T : Reps) {
      Tid = T;
      std::optional<uint64_t> S = eval(E.Barrier.Slot);
      std::optional<uint64_t> Pa = E.Parity.E ? eval(E.Parity) : std::optional<uint64_t>(0);
      if (!S || !Pa) {
        Tid.reset();
        fail("the slot of `" + E.Opcode + "` could not be evaluated for thread " +
                 std::to_string(T),
             Index);
        return;
      }
      auto &G = Groups[{*S, *Pa}];
      if (!G.first)
        G.second = T;
      ++G.first;
    }
    for (const auto &KV : Groups) {
      Tid = KV.second.second;
      eventFor(Index, Owner, KV.second.first,
               E.Threads.str() + " slot " + std::to_string(KV.first.first));
    }
    Tid.reset();
  }

  static bool threadDependent(const Expr *E) {
    return E && E->mentions([](const Expr *L) {
      return L->is(ExprKind::SpecialReg) &&
             (L->specialRegister() == SpecialRegister::TidX ||
              L->specialRegister() == SpecialRegister::LaneId ||
              L->specialRegister() == SpecialRegister::WarpId);
    });
  }

  void eventFor(unsigned Index, unsigned Owner, std::optional<unsigned> Count,
                const std::string &Threads) {
    const Event &E = P.Events[Index];
    if (++Executed > MaxEventsPerExpansion) {
      fail("more than " + std::to_string(MaxEventsPerExpansion) + " barrier events for " +
               A.describe(P),
           Index);
      return;
    }
    ++Seq;
    std::optional<bool> When = condition(E.When);
    bool IsWait = E.Kind == EventKind::Wait || E.Kind == EventKind::Probe;
    if (When && !*When)
      return;
    if (!E.Barrier.resolved()) {
      fail("the barrier of `" + E.Opcode + "` is not resolved: " + E.Barrier.Unresolved, Index);
      return;
    }
    std::optional<uint64_t> Slot = E.Barrier.Slot.absent() ? 0 : eval(E.Barrier.Slot);
    if (!Slot || *Slot >= P.Barriers[E.Barrier.Array].Slots) {
      fail("the slot of `" + E.Opcode + "` could not be evaluated for " + A.describe(P), Index);
      return;
    }

    if (IsWait) {
      std::optional<uint64_t> Parity = eval(E.Parity);
      if (!Parity) {
        // One unknown parity leaves the other slots decidable; this slot's waiters are not.
        SlotTraffic &S = slot(Cta, E.Barrier.Array, *Slot);
        if (S.WaitUnknown.empty()) {
          S.WaitUnknown = "the parity of `" + E.Opcode + "` is not known" +
                          (E.Parity.Unknown.empty() ? std::string(" for " + A.describe(P))
                                                    : ": " + E.Parity.Unknown);
          S.WaitUnknownEvent = Index;
        }
        return;
      }
      SlotTraffic &S = slot(Cta, E.Barrier.Array, *Slot);
      WaiterStream *W = nullptr;
      for (WaiterStream &X : S.Waiters)
        if (X.Threads == Threads)
          W = &X;
      if (!W) {
        W = &S.Waiters.emplace_back();
        W->Threads = Threads;
      }
      WaitStep &St = W->Steps.emplace_back();
      St.Event = Index;
      St.Owner = Owner;
      St.Seq = Seq;
      St.Stamp = Stamp;
      St.Parity = static_cast<unsigned>(*Parity & 1);
      St.Probe = E.Kind == EventKind::Probe;
      St.Optional = !When.has_value();
      return;
    }
    if (E.Kind == EventKind::Init) {
      slot(Cta, E.Barrier.Array, *Slot).Inits.push_back({Index, Seq});
      return;
    }

    // Where it lands: the peer a mapa names, every CTA of a multicast mask, or here.
    llvm::SmallVector<unsigned, 4> Targets;
    bool McastTargets = E.Multicast && (E.Kind == EventKind::MmaCommit ||
                                        E.Kind == EventKind::AsyncLoad);
    if (McastTargets) {
      std::optional<uint64_t> Mask = eval(E.CtaMask);
      if (!Mask) {
        fail("the ctaMask of `" + E.Opcode + "` could not be evaluated", Index);
        return;
      }
      for (unsigned C = 0; C < A.ClusterSize; ++C)
        if (*Mask >> C & 1)
          Targets.push_back(C);
      if (A.ClusterSize < 64 && (*Mask >> A.ClusterSize) != 0)
        OutsideCluster.insert(E.Barrier.Array);
    } else if (!E.Barrier.PeerRank.absent()) {
      std::optional<uint64_t> Rank = eval(E.Barrier.PeerRank);
      if (!Rank) {
        fail("the peer CTA of `" + E.Opcode + "` could not be evaluated", Index);
        return;
      }
      if (*Rank >= A.ClusterSize) {
        OutsideCluster.insert(E.Barrier.Array);
        return;
      }
      Targets.push_back(static_cast<unsigned>(*Rank));
    } else {
      Targets.push_back(Cta);
    }

    Occurrence Add;
    Add.FirstEvent = Index;
    Add.Owner = Owner;
    Add.Seq = Seq;
    Add.Stamp = Stamp;
    std::string Why;
    if (!Count)
      Why = "the threads of `" + E.Opcode + "` are not known: " + E.Threads.str();
    uint64_t N = Count.value_or(0);
    switch (E.Kind) {
    case EventKind::Arrive: {
      std::optional<uint64_t> C = E.Count.absent() ? 1 : eval(E.Count);
      if (!C)
        Why = "the count of `" + E.Opcode + "` is not known";
      Add.Arrivals = C.value_or(0) * N;
      break;
    }
    case EventKind::ArriveExpectTx: {
      std::optional<uint64_t> C = E.Count.absent() ? 1 : eval(E.Count);
      std::optional<uint64_t> B = eval(E.TxBytes);
      if (!C || !B)
        Why = "the count or bytes of `" + E.Opcode + "` are not known";
      Add.Arrivals = C.value_or(0) * N;
      Add.ExpectBytes = B.value_or(0) * N;
      break;
    }
    case EventKind::ExpectTx: {
      std::optional<uint64_t> B = eval(E.TxBytes);
      if (!B)
        Why = "the bytes of `" + E.Opcode + "` are not known";
      Add.ExpectBytes = B.value_or(0) * N;
      break;
    }
    case EventKind::CompleteTx: {
      std::optional<uint64_t> B = eval(E.TxBytes);
      if (!B)
        Why = "the bytes of `" + E.Opcode + "` are not known";
      Add.CompleteBytes = B.value_or(0) * N;
      break;
    }
    case EventKind::AsyncLoad:
    case EventKind::TryCancel: {
      std::optional<uint64_t> B =
          E.Kind == EventKind::TryCancel && !E.Bytes.known() ? 16 : eval(E.Bytes);
      if (!B)
        Why = "the bytes of `" + E.Opcode + "` are not known (" + toString(E.BytesFrom) + ")";
      Add.CompleteBytes = B.value_or(0) * N;
      break;
    }
    case EventKind::MmaCommit:
      Add.Arrivals = N;
      break;
    case EventKind::CpAsyncArrive:
      Add.Arrivals = llvm::StringRef(E.Opcode).contains(".noinc") ? N : 0;
      break;
    default:
      return;
    }
    if (!When)
      Why = "the condition of `" + E.Opcode + "` could not be evaluated";

    for (unsigned T : Targets) {
      SlotTraffic &S = slot(T, E.Barrier.Array, *Slot);
      if (!Why.empty() && S.Unknown.empty()) {
        S.Unknown = Why;
        S.UnknownEvent = Index;
      }
      ArriverStream *St = nullptr;
      for (ArriverStream &X : S.Arrivers)
        if (X.SourceCta == Cta && X.Threads == Threads)
          St = &X;
      if (!St) {
        St = &S.Arrivers.emplace_back();
        St->SourceCta = Cta;
        St->Threads = Threads;
      }
      // Events of one loop iteration on one slot are one phase's share, unless the slot
      // gets a second arrival or expect_tx in it (an unrolled ring that wraps inside one
      // iteration, or straight-line code): that starts the next phase.
      const Occurrence *Cur = St->Occurrences.empty() ? nullptr : &St->Occurrences.back();
      if (Cur && Cur->Stamp == Stamp && Cur->Owner == Owner &&
          !(Add.Arrivals && Cur->Arrivals) && !(Add.ExpectBytes && Cur->ExpectBytes)) {
        Occurrence &O = St->Occurrences.back();
        O.Events.push_back(Index);
        O.Arrivals += Add.Arrivals;
        O.ExpectBytes += Add.ExpectBytes;
        O.CompleteBytes += Add.CompleteBytes;
        continue;
      }
      Occurrence &O = St->Occurrences.emplace_back(Add);
      O.Events.push_back(Index);
    }
  }
};

/// Parameters any closed form the expansion evaluates mentions, by PTX name.
std::vector<std::string> mentionedParams(const Protocol &P) {
  std::set<std::string> Names;
  auto Note = [&](const Expr *E) {
    if (!E)
      return;
    E->mentions([&](const Expr *L) {
      if (L->is(ExprKind::Param))
        Names.insert(L->name().str());
      return false;
    });
  };
  for (const ProtocolLoop &L : P.Loops) {
    Note(L.Trip.E);
    Note(L.When.E);
  }
  for (const Role &R : P.Roles)
    Note(R.When.E);
  for (const Event &E : P.Events) {
    if (!isBarrierEvent(E))
      continue;
    for (const ProtocolValue *V : {&E.When, &E.Barrier.Slot, &E.Barrier.PeerRank, &E.Count,
                                   &E.TxBytes, &E.Parity, &E.Bytes, &E.CtaMask})
      Note(V->E);
  }
  return {Names.begin(), Names.end()};
}

} // namespace

bool ArriverStream::arrives() const {
  return llvm::any_of(Occurrences, [](const Occurrence &O) { return O.hasArrivals(); });
}

std::string Assignment::describe(const Protocol &P) const {
  std::string Out;
  for (const auto &KV : Params) {
    std::string Name = KV.first().str();
    for (unsigned I = 0; I < P.ParamSymbols.size() && I < P.ParamNames.size(); ++I)
      if (P.ParamSymbols[I] == Name)
        Name = P.ParamNames[I];
    Out += (Out.empty() ? "" : ", ") + Name + " = " + std::to_string(KV.second);
  }
  return Out.empty() ? "every parameter value" : Out;
}

const SlotTraffic *Expansion::find(unsigned Cta, unsigned Array, unsigned Slot) const {
  for (const SlotTraffic &S : Slots)
    if (S.Cta == Cta && S.Array == Array && S.Slot == Slot)
      return &S;
  return nullptr;
}

std::vector<Expansion> traffic::expandTraffic(const Protocol &P) {
  std::vector<std::string> Params = mentionedParams(P);
  // Sizes are multiples of the kernels' tiles: 64 to 1024 gives 1 to 16 k-tiles, and
  // persistent loops at 512 several tiles, so stage wraps and tile boundaries both occur.
  const uint64_t Base = 512;
  const uint64_t Values[] = {64, 128, 192, 256, 320, 448, 1024};
  std::vector<llvm::StringMap<uint64_t>> Samples;
  llvm::StringMap<uint64_t> B;
  for (const std::string &N : Params)
    B[N] = Base;
  Samples.push_back(B);
  for (const std::string &N : Params)
    for (uint64_t V : Values) {
      llvm::StringMap<uint64_t> S = B;
      S[N] = V;
      Samples.push_back(std::move(S));
    }

  std::vector<Expansion> Out;
  unsigned Cluster = std::max(1u, P.Launch.ClusterSize);
  for (llvm::StringMap<uint64_t> &S : Samples) {
    Expansion &X = Out.emplace_back();
    X.Values.Params = std::move(S);
    X.Values.ClusterSize = Cluster;
    X.Values.NctaidX = Cluster;
    std::map<std::tuple<unsigned, unsigned, unsigned>, SlotTraffic> Slots;
    for (unsigned C = 0; C < Cluster && X.Unknown.empty(); ++C)
      Expander(P, X.Values, C, Slots, X.Unknown, X.UnknownEvent, X.OutsideCluster).run();
    for (auto &KV : Slots)
      X.Slots.push_back(std::move(KV.second));
  }
  return Out;
}

SlotPhases traffic::phasesOf(const SlotTraffic &S) {
  SlotPhases Out;
  size_t Longest = 0;
  uint64_t Shortest = UINT64_MAX;
  for (const ArriverStream &St : S.Arrivers) {
    Longest = std::max(Longest, St.Occurrences.size());
    Shortest = std::min<uint64_t>(Shortest, St.Occurrences.size());
  }
  Out.FullPhases = S.Arrivers.empty() ? 0 : Shortest;
  Out.Phases.resize(Longest);
  for (const ArriverStream &St : S.Arrivers)
    for (size_t J = 0; J < Longest; ++J) {
      SlotPhases::Phase &Ph = Out.Phases[J];
      if (J >= St.Occurrences.size()) {
        Ph.Complete = false;
        continue;
      }
      const Occurrence &O = St.Occurrences[J];
      Ph.Arrivals += O.Arrivals;
      Ph.ExpectBytes += O.ExpectBytes;
      Ph.CompleteBytes += O.CompleteBytes;
    }
  return Out;
}

WaitNeeds traffic::needsOf(const WaiterStream &W) {
  WaitNeeds Out;
  for (size_t I = 0; I < W.Steps.size(); ++I) {
    const WaitStep &St = W.Steps[I];
    if (I == 0) {
      Out.Need.push_back(St.Parity == 0 ? 1 : 0);
      continue;
    }
    const WaitStep &Prev = W.Steps[I - 1];
    uint64_t PrevNeed = Out.Need.back();
    if (St.Parity != Prev.Parity) {
      Out.Need.push_back(PrevNeed + 1);
      continue;
    }
    // The same parity again: a blocking wait after a probe of that phase (peeking), an
    // optional wait, or a second wait in the same iteration asks for the same phase;
    // anything else skips one.
    Out.Need.push_back(PrevNeed);
    if (!Prev.Probe && !St.Optional && St.Stamp != Prev.Stamp && !Out.RepeatedParity)
      Out.RepeatedParity = I;
  }
  return Out;
}

std::optional<uint64_t> traffic::initCount(const Protocol &P, unsigned Array, unsigned Slot) {
  const BarrierArray &B = P.Barriers[Array];
  if (Slot >= B.InitCounts.size())
    return std::nullopt;
  return B.InitCounts[Slot].constant();
}

std::string traffic::slotName(const Protocol &P, unsigned Array, unsigned Slot, unsigned Cta) {
  const BarrierArray &B = P.Barriers[Array];
  std::string Out = B.Name;
  if (B.Slots > 1)
    Out += "[" + std::to_string(Slot) + "]";
  if (P.Launch.ClusterSize > 1)
    Out += " in CTA " + std::to_string(Cta);
  return Out;
}

std::string traffic::ownerName(const Protocol &P, unsigned Owner) {
  if (Owner == PrologueOwner)
    return "the prologue";
  if (Owner == EpilogueOwner)
    return "the epilogue";
  return "the " + P.Roles[Owner].Name;
}

std::vector<ArrayUse> traffic::arrayUses(const Protocol &P, const std::vector<Expansion> &Es) {
  std::vector<ArrayUse> Out(P.Barriers.size());
  for (const Event &E : P.Events) {
    if (!E.Barrier.resolved())
      continue;
    ArrayUse &U = Out[E.Barrier.Array];
    switch (E.Kind) {
    case EventKind::AsyncLoad:
    case EventKind::TryCancel:
      U.AsyncProxy = U.TxTraffic = true;
      break;
    case EventKind::CpAsyncArrive:
      U.AsyncProxy = true;
      break;
    case EventKind::MmaCommit:
      U.AsyncProxy = U.Commits = true;
      break;
    case EventKind::ArriveExpectTx:
    case EventKind::ExpectTx:
    case EventKind::CompleteTx:
      U.TxTraffic = true;
      break;
    default:
      break;
    }
  }
  for (const Expansion &X : Es)
    for (const SlotTraffic &S : X.Slots)
      for (const ArriverStream &St : S.Arrivers)
        if (St.SourceCta != S.Cta)
          Out[S.Array].FromPeers = true;
  return Out;
}
