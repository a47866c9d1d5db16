//===- BarrierTrafficFacts.cpp - what the unrolled traffic says about each barrier ----===//
//
// The facts the mbarrier checks share (BarrierTraffic.h): per-phase mismatches, starved and
// lapped waiters, roles that start a pipeline at the same parity, and the ranking that lets
// only the root cause of a broken barrier be reported.
//
//===----------------------------------------------------------------------------------===//
#include "BarrierTraffic.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

bool traffic::streamsTakeTurns(const SlotTraffic &S, uint64_t Init) {
  size_t Length = SIZE_MAX;
  bool Differ = false;
  for (const ArriverStream &A : S.Arrivers) {
    for (const Occurrence &O : A.Occurrences)
      if (O.Arrivals != Init || O.ExpectBytes || O.CompleteBytes)
        return false;
    if (Length != SIZE_MAX && A.Occurrences.size() != Length)
      Differ = true;
    Length = A.Occurrences.size();
  }
  return Differ;
}

SlotPhases TrafficFacts::phases(const SlotTraffic &S) const {
  if (!TurnTaking.count(S.Array))
    return phasesOf(S);
  SlotPhases Out;
  for (const ArriverStream &A : S.Arrivers)
    for (const Occurrence &O : A.Occurrences) {
      SlotPhases::Phase Ph;
      Ph.Arrivals = O.Arrivals;
      Ph.ExpectBytes = O.ExpectBytes;
      Ph.CompleteBytes = O.CompleteBytes;
      Out.Phases.push_back(Ph);
    }
  Out.FullPhases = Out.Phases.size();
  return Out;
}

std::optional<size_t> traffic::arrivalMismatch(const Protocol &P, const SlotTraffic &S,
                                               const SlotPhases &Ph) {
  std::optional<uint64_t> Init = initCount(P, S.Array, S.Slot);
  if (!Init || !S.Unknown.empty())
    return std::nullopt;
  bool AnyArrival = llvm::any_of(S.Arrivers, [](const ArriverStream &A) { return A.arrives(); });
  if (!AnyArrival)
    return std::nullopt;
  for (size_t J = 0; J < Ph.Phases.size(); ++J)
    if (Ph.Phases[J].Complete && Ph.Phases[J].Arrivals != *Init)
      return J;
  return std::nullopt;
}

std::optional<size_t> traffic::txMismatch(const SlotTraffic &S, const SlotPhases &Ph) {
  if (!S.Unknown.empty())
    return std::nullopt;
  for (size_t J = 0; J < Ph.Phases.size(); ++J)
    if (Ph.Phases[J].Complete && Ph.Phases[J].ExpectBytes != Ph.Phases[J].CompleteBytes)
      return J;
  return std::nullopt;
}

std::optional<size_t> traffic::starvedWaiter(const SlotTraffic &S) {
  if (!S.Arrivers.empty() || !S.WaitUnknown.empty())
    return std::nullopt;
  for (size_t W = 0; W < S.Waiters.size(); ++W)
    if (needsOf(S.Waiters[W]).last() > 0)
      return W;
  return std::nullopt;
}

std::optional<Lap> traffic::lappedWaiter(const SlotTraffic &S) {
  if (!S.Unknown.empty() || !S.WaitUnknown.empty() || S.Arrivers.empty())
    return std::nullopt;
  for (size_t W = 0; W < S.Waiters.size(); ++W) {
    const WaiterStream &Ws = S.Waiters[W];
    if (Ws.Steps.empty())
      continue;
    unsigned Owner = Ws.Steps.front().Owner;
    // Program order decides only when every arrival comes from the waiter's own role (or
    // the prologue before it) in this CTA.
    bool SameRole = llvm::all_of(S.Arrivers, [&](const ArriverStream &A) {
      return A.SourceCta == S.Cta &&
             llvm::all_of(A.Occurrences, [&](const Occurrence &O) {
               return O.Owner == Owner || O.Owner == PrologueOwner;
             });
    });
    if (!SameRole)
      continue;
    // A first wait for parity 1 on a slot the waiter's own role fills skips the first
    // fill's phase: that missing wait is a read without a wait (smem-raw-wait), not a lap.
    if (Ws.Steps.front().Parity == 1)
      continue;
    WaitNeeds N = needsOf(Ws);
    for (size_t I = 0; I < Ws.Steps.size(); ++I) {
      uint64_t Done = UINT64_MAX;
      const Occurrence *By = nullptr;
      for (const ArriverStream &A : S.Arrivers) {
        // Occurrences are in execution order (the prologue runs first), so those before
        // the wait are a prefix.
        auto End = std::partition_point(
            A.Occurrences.begin(), A.Occurrences.end(),
            [&](const Occurrence &O) { return O.Seq < Ws.Steps[I].Seq; });
        uint64_t Before = static_cast<uint64_t>(End - A.Occurrences.begin());
        if (Before > N.Need[I])
          By = &A.Occurrences[N.Need[I]];
        Done = std::min(Done, Before);
      }
      if (Done > N.Need[I] && By) {
        Lap L;
        L.Waiter = W;
        L.Step = I;
        L.Need = N.Need[I];
        L.Completed = Done;
        L.By = By;
        return L;
      }
    }
  }
  return std::nullopt;
}

std::vector<PhasePair> traffic::samePhasePairs(const Protocol &P, const Expansion &X,
                                               const std::set<unsigned> &Skipping) {
  // Per (role, array): the role's first wait on the array (by program order), and whether
  // the role arrives on it.
  struct First {
    uint64_t Seq = UINT64_MAX;
    unsigned Event = NoIndex;
    unsigned Parity = 0;
    bool Probe = false;
  };
  std::map<std::pair<unsigned, unsigned>, First> Waits;
  std::set<std::pair<unsigned, unsigned>> Arrives;
  std::map<std::pair<unsigned, unsigned>, uint64_t> FirstArrival; ///< program order
  for (const SlotTraffic &S : X.Slots) {
    if (S.Cta != 0 || !S.WaitUnknown.empty())
      continue;
    for (const WaiterStream &W : S.Waiters)
      for (const WaitStep &St : W.Steps) {
        if (St.Owner >= P.Roles.size())
          continue;
        First &F = Waits[{St.Owner, S.Array}];
        if (St.Seq < F.Seq) {
          F.Seq = St.Seq;
          F.Event = St.Event;
          F.Parity = St.Parity;
          F.Probe = St.Probe;
        }
      }
    for (const ArriverStream &A : S.Arrivers)
      for (const Occurrence &O : A.Occurrences)
        if (O.Owner < P.Roles.size() && (O.Arrivals || O.CompleteBytes)) {
          Arrives.insert({O.Owner, S.Array});
          auto It = FirstArrival.try_emplace({O.Owner, S.Array}, O.Seq).first;
          It->second = std::min(It->second, O.Seq);
        }
  }
  // Whether Waiter first waits at parity 0 on an array only Arriver completes: it takes
  // data from Arriver there (a full barrier), so a parity-1 pair between them is two release
  // barriers, each freeing a resource for the other (attention's score and probability
  // buffers in tensor memory), which both start out free.
  auto TakesDataFrom = [&](unsigned Waiter, unsigned Arriver) {
    for (const auto &[Key, F] : Waits)
      if (Key.first == Waiter && F.Parity == 0 && !F.Probe &&
          Arrives.count({Arriver, Key.second}) && !Arrives.count({Waiter, Key.second}))
        return true;
    return false;
  };
  auto ThirdArriver = [&](unsigned Array, unsigned RA, unsigned RB) {
    for (const auto &[Owner, X] : Arrives)
      if (X == Array && Owner != RA && Owner != RB)
        return true;
    return false;
  };
  std::vector<PhasePair> Out;
  for (const auto &[KeyA, FA] : Waits)
    for (const auto &[KeyB, FB] : Waits) {
      auto [RA, XA] = KeyA;
      auto [RB, XB] = KeyB;
      if (RA >= RB || XA == XB || FA.Parity != FB.Parity || Skipping.count(RA) ||
          Skipping.count(RB))
        continue;
      // A waits on XA, which B completes; B waits on XB, which A completes.
      if (!Arrives.count({RB, XA}) || !Arrives.count({RA, XB}))
        continue;
      if (Arrives.count({RA, XA}) || Arrives.count({RB, XB}))
        continue;
      // Waiting for parity 0 first is right when the other side arrives once before its
      // own first wait (a consumer that pre-releases every stage).
      if (FA.Parity == 0 && (FirstArrival[{RB, XA}] < FB.Seq || FirstArrival[{RA, XB}] < FA.Seq))
        continue;
      if (FA.Parity == 1 && TakesDataFrom(RA, RB) && TakesDataFrom(RB, RA))
        continue;
      // Both waiting for a first completion deadlocks only where nobody else completes
      // either barrier: a third role that arrives on one starts the exchange.
      if (FA.Parity == 0 && (ThirdArriver(XA, RA, RB) || ThirdArriver(XB, RA, RB)))
        continue;
      PhasePair Pp;
      Pp.RoleA = RA;
      Pp.RoleB = RB;
      Pp.ArrayA = XA;
      Pp.ArrayB = XB;
      Pp.EventA = FA.Event;
      Pp.EventB = FB.Event;
      Pp.SeqA = FA.Seq;
      Pp.SeqB = FB.Seq;
      Pp.Parity = FA.Parity;
      Out.push_back(Pp);
    }
  return Out;
}

namespace {

/// What identifies a protocol's barrier traffic: the file, the kernel, and where each event
/// and loop is. Facts hold no pointers into the protocol, so equal keys share them.
std::string trafficKey(const Protocol &P) {
  std::string Key = P.File + "\n" + P.Kernel + "\n";
  llvm::raw_string_ostream OS(Key);
  for (const Event &E : P.Events)
    OS << static_cast<unsigned>(E.Kind) << ":" << E.Where.PtxLine << ":" << E.Where.PtxColumn
       << ",";
  for (const ProtocolLoop &L : P.Loops)
    OS << L.Where.PtxLine << ";";
  OS << P.Roles.size();
  return Key;
}

TrafficFacts computeTraffic(const Protocol &P);

} // namespace

const TrafficFacts &traffic::analyzeTraffic(const Protocol &P) {
  // The mbarrier checks run one after another on the same protocol: unroll it once per
  // thread (lint runs files on several threads).
  thread_local std::string Key;
  thread_local TrafficFacts Facts;
  std::string K = trafficKey(P);
  if (K != Key) {
    Facts = computeTraffic(P);
    Key = std::move(K);
  }
  return Facts;
}

namespace {
TrafficFacts computeTraffic(const Protocol &P) {
  TrafficFacts F;
  F.Expansions = expandTraffic(P);
  F.Uses = arrayUses(P, F.Expansions);
  F.Problems.assign(P.Barriers.size(), 0);
  auto Mark = [&](unsigned Array, Problem K) {
    F.Problems[Array] |= 1u << static_cast<unsigned>(K);
  };
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    F.OutsideCluster.insert(X.OutsideCluster.begin(), X.OutsideCluster.end());
    for (const SlotTraffic &S : X.Slots)
      for (const ArriverStream &A : S.Arrivers) {
        F.EverArrived.insert({S.Array, S.Cta});
        for (const Occurrence &O : A.Occurrences)
          F.ArrivingOwners[S.Array].insert(O.Owner);
      }
  }
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots)
      if (S.WaitUnknown.empty())
        for (const WaiterStream &W : S.Waiters)
          if (needsOf(W).RepeatedParity)
            F.PhaseSkipOwners.insert(W.Steps.front().Owner);
  }
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots)
      if (std::optional<uint64_t> Init = initCount(P, S.Array, S.Slot);
          Init && S.Unknown.empty() && streamsTakeTurns(S, *Init))
        F.TurnTaking.insert(S.Array);
  }
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      SlotPhases Ph = F.phases(S);
      if (starvedWaiter(S) && !F.EverArrived.count({S.Array, S.Cta}))
        Mark(S.Array, Problem::NoArriver);
      if (arrivalMismatch(P, S, Ph))
        Mark(S.Array, Problem::ArrivalCount);
      if (txMismatch(S, Ph))
        Mark(S.Array, Problem::TxBytes);
      if (S.WaitUnknown.empty())
        for (const WaiterStream &W : S.Waiters)
          if (needsOf(W).RepeatedParity)
            Mark(S.Array, Problem::PhaseSkip);
      if (lappedWaiter(S))
        Mark(S.Array, Problem::PhaseSkip);
    }
    for (const PhasePair &Pp : samePhasePairs(P, X, F.PhaseSkipOwners)) {
      Mark(Pp.ArrayA, Problem::InitialPhase);
      Mark(Pp.ArrayB, Problem::InitialPhase);
    }
  }
  return F;
}
} // namespace

bool traffic::remarkIfUndecided(CheckContext &Ctx, const TrafficFacts &F, llvm::StringRef What) {
  const Protocol &P = Ctx.protocol();
  bool AnyBarrier =
      llvm::any_of(P.Events, [](const Event &E) { return E.Barrier.present(); });
  if (!AnyBarrier || F.Expansions.empty())
    return true;
  for (const Expansion &X : F.Expansions)
    if (X.Unknown.empty())
      return false;
  const Expansion &X = F.Expansions.front();
  SourceRef Where = X.UnknownEvent != NoIndex ? P.Events[X.UnknownEvent].Where : SourceRef();
  Ctx.report(Severity::Remark, (What + " not checked: " + X.Unknown).str(), Where);
  return true;
}
