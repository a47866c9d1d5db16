//===- Explain.cpp - gather a trace, its protocol and the wait-for analysis ----------===//
//
// Barrier states: a hardware capture records none (only where each warp waits), so they are
// shown only for solver traces, by replaying the schedule's steps on models::Mbarrier, the
// same reference model the proofs are checked against. Slots the schedule never initializes
// start from the protocol's init counts (the schedule may begin after the prologue).
//
//===----------------------------------------------------------------------------------===//
#include "Explain.h"

#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/models/Mbarrier.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace wsv {
namespace report {

std::string warpsText(const std::vector<unsigned> &Warps) {
  if (Warps.empty())
    return "no warp";
  std::vector<unsigned> W = Warps;
  std::sort(W.begin(), W.end());
  bool Contiguous = W.back() - W.front() + 1 == W.size();
  if (W.size() == 1)
    return "warp " + std::to_string(W[0]);
  if (Contiguous)
    return "warps " + std::to_string(W.front()) + "-" + std::to_string(W.back());
  std::string Out = "warps ";
  for (size_t I = 0; I < W.size(); ++I)
    Out += (I ? "," : "") + std::to_string(W[I]);
  return Out;
}

std::string waitText(const analyzer::StuckWait &W) {
  if (!W.Other.empty())
    return W.Other;
  if (W.Named)
    return "bar.sync " + std::to_string(W.NamedId) + ", " + std::to_string(W.NamedThreads);
  return W.Barrier + "[" + std::to_string(W.Slot) + "] parity " + std::to_string(W.Parity);
}

std::string eventWhere(const analyzer::Protocol &P, unsigned Event) {
  return analyzer::formatSource(P.Events[Event].Where);
}

std::string eventSource(const analyzer::Protocol &P, unsigned Event) {
  if (const analyzer::CudaFrame *F = P.Events[Event].Where.kernelFrame())
    return llvm::sys::path::filename(F->File).str() + ":" + std::to_string(F->Line);
  return "";
}

namespace {

analyzer::StuckWait fromWait(const std::string &Role, const TraceWait &W) {
  analyzer::StuckWait S;
  S.Role = Role;
  S.Named = W.K == TraceWait::Kind::Named;
  S.Barrier = W.Barrier;
  S.Slot = W.Index;
  S.Parity = W.Parity;
  S.NamedId = W.Id;
  S.NamedThreads = W.Threads;
  if (W.K == TraceWait::Kind::Other)
    S.Other = W.Op;
  return S;
}

/// The snapshot: the trace's summary groups, or the stuck records grouped the same way when a
/// writer left the summary out.
void buildSnapshot(const Trace &T, Explanation &E) {
  E.Snap.Roles = T.Roles;
  E.Snap.Silent = T.SilentRoles;
  // The GEMM's sizes are the kernels' M, N, K parameters.
  if (T.Launch.K)
    E.Snap.Params = {{"M", T.Launch.M}, {"N", T.Launch.N}, {"K", T.Launch.K}};
  for (const auto &[Name, Value] : T.Launch.Parameters)
    E.Snap.Params[Name] = Value;
  // A solver trace lists no silent roles: the roles not blocked at the end have finished.
  if (T.fromSolver() && E.Snap.Silent.empty())
    for (const std::string &R : T.Roles)
      if (std::none_of(T.Stuck.begin(), T.Stuck.end(),
                       [&](const TraceStuck &S) { return S.Role == R; }))
        E.Snap.Silent.push_back(R);
  if (!T.Summary.empty()) {
    for (const TraceGroup &G : T.Summary) {
      analyzer::StuckWait S = fromWait(G.Role, G.Wait);
      S.Warps = G.Warps;
      S.FirstIteration = G.FirstIteration;
      S.LastIteration = G.LastIteration;
      S.Ctas = G.Ctas;
      // A group of an explorer's parts of agents: its records say which.
      for (const TraceStuck &R : T.Stuck)
        if (!R.PartOf.empty() && R.Role == G.Role && R.Wait.sameWait(G.Wait)) {
          S.PartOf = R.PartOf;
          S.PartThreads = R.PartThreads;
          break;
        }
      E.Snap.Stuck.push_back(std::move(S));
    }
  } else {
    for (const TraceStuck &R : T.Stuck) {
      auto It = std::find_if(E.Snap.Stuck.begin(), E.Snap.Stuck.end(),
                             [&](const analyzer::StuckWait &S) {
                               return S.Role == R.Role &&
                                      waitText(S) == waitText(fromWait(R.Role, R.Wait));
                             });
      if (It == E.Snap.Stuck.end()) {
        analyzer::StuckWait S = fromWait(R.Role, R.Wait);
        S.FirstIteration = S.LastIteration = R.Iteration;
        S.PartOf = R.PartOf;
        S.PartThreads = R.PartThreads;
        S.Ctas = 0;
        E.Snap.Stuck.push_back(std::move(S));
        It = E.Snap.Stuck.end() - 1;
      }
      if (R.WarpKnown && !std::count(It->Warps.begin(), It->Warps.end(), R.Warp))
        It->Warps.push_back(R.Warp);
      It->FirstIteration = std::min(It->FirstIteration, R.Iteration);
      It->LastIteration = std::max(It->LastIteration, R.Iteration);
    }
  }
  // Per group: how long its warps had waited, and which CTAs have records.
  E.Groups.resize(E.Snap.Stuck.size());
  for (const TraceStuck &R : T.Stuck)
    for (size_t G = 0; G < E.Snap.Stuck.size(); ++G) {
      const analyzer::StuckWait &S = E.Snap.Stuck[G];
      if (S.Role != R.Role || waitText(S) != waitText(fromWait(R.Role, R.Wait)))
        continue;
      if (R.CapturedNs >= R.SinceNs && R.SinceNs)
        E.Groups[G].WaitedNs = std::max(E.Groups[G].WaitedNs, R.CapturedNs - R.SinceNs);
      if (std::find(E.Groups[G].Ctas.begin(), E.Groups[G].Ctas.end(), R.Cta) ==
          E.Groups[G].Ctas.end())
        E.Groups[G].Ctas.push_back(R.Cta);
      if (T.Summary.empty())
        E.Snap.Stuck[G].Ctas = static_cast<unsigned>(E.Groups[G].Ctas.size());
    }
}

using SlotKey = std::tuple<unsigned, std::string, unsigned>; // cluster rank, barrier, slot

/// Replays the schedule's barrier operations on the reference model.
void replay(const Trace &T, const analyzer::Protocol *P, Explanation &E) {
  if (!T.fromSolver()) {
    E.NoStates = "a hardware capture records where each warp waits, not the barriers' "
                 "counts; what the blocked waits say:";
    return;
  }
  if (!T.FinalBarriers.empty()) {
    // The solver stated its end state: show that rather than a replay of its own steps.
    for (const TraceBarrierState &B : T.FinalBarriers) {
      BarrierEndState St;
      // `full[1]`, or `full[1]@cta0` where the solver modeled every CTA of a cluster.
      auto [Name, Cta] = llvm::StringRef(B.Name).split('@');
      auto [Array, Rest] = Name.split('[');
      St.Barrier = Array.str();
      Rest.consume_back("]");
      Rest.getAsInteger(10, St.Slot);
      St.InCta = Cta.consume_front("cta") && !Cta.getAsInteger(10, St.ClusterRank);
      St.Initialized = true;
      St.Pending = static_cast<uint32_t>(std::max<int64_t>(B.Pending, 0));
      St.TxCount = B.TxCount;
      St.CompletedPhases = B.Phase;
      St.InFlight = B.InFlight;
      St.FromTrace = true;
      E.States.push_back(std::move(St));
    }
    E.HaveStates = true;
    return;
  }
  std::map<SlotKey, models::Mbarrier> Bars;
  std::map<SlotKey, std::vector<std::string>> Violations;
  auto Get = [&](unsigned Rank, const std::string &Name, unsigned Slot) -> models::Mbarrier & {
    SlotKey K{Rank, Name, Slot};
    auto It = Bars.find(K);
    if (It != Bars.end())
      return It->second;
    models::Mbarrier &B = Bars[K];
    // Slots initialized before the schedule starts take the protocol's count.
    bool InitStep = std::any_of(T.Steps.begin(), T.Steps.end(), [&](const TraceStep &S) {
      return llvm::StringRef(S.Op).starts_with("mbarrier.init") && S.Barrier == Name &&
             S.Index.value_or(0) == Slot;
    });
    if (!InitStep && P)
      for (const analyzer::BarrierArray &A : P->Barriers)
        if (A.Name == Name && !A.InitCounts.empty()) {
          const analyzer::ProtocolValue &C =
              A.InitCounts[std::min<size_t>(Slot, A.InitCounts.size() - 1)];
          if (C.constant())
            B.init(static_cast<uint32_t>(*C.constant()));
        }
    return B;
  };
  auto Name = [](const std::string &B, unsigned Slot) {
    return B + "[" + std::to_string(Slot) + "]";
  };
  E.Effects.resize(T.Steps.size());
  for (size_t I = 0; I < T.Steps.size(); ++I) {
    const TraceStep &S = T.Steps[I];
    if (!S.Barrier)
      continue;
    llvm::StringRef Op(S.Op);
    unsigned Slot = S.Index.value_or(0);
    unsigned Rank = 0; // a schedule's steps name no cluster rank: one CTA's barriers
    models::Mbarrier &B = Get(Rank, *S.Barrier, Slot);
    if (!B.initialized() && !llvm::StringRef(S.Op).starts_with("mbarrier.init")) {
      // No init step and no protocol: the count is not known, so the slot is not replayed.
      E.Effects[I].Note = "not replayed: " + Name(*S.Barrier, Slot) + "'s init count is unknown";
      continue;
    }
    uint64_t Before = B.completedPhases();
    uint32_t Count = S.Count.value_or(1);
    models::MbarrierViolation V = models::MbarrierViolation::None;
    StepEffect &Fx = E.Effects[I];
    if (Op.starts_with("mbarrier.init")) {
      V = B.init(Count);
      Fx.Note = "expects " + std::to_string(Count) + " arrival(s) per phase";
    } else if (Op.starts_with("mbarrier.arrive.expect_tx") ||
               Op.starts_with("mbarrier.arrive_drop.expect_tx")) {
      V = B.arriveExpectTx(static_cast<uint32_t>(S.TxBytes.value_or(0)), Count);
      Fx.Arrival = true;
    } else if (Op.starts_with("mbarrier.expect_tx")) {
      V = B.expectTx(static_cast<uint32_t>(S.TxBytes.value_or(0)));
    } else if (Op.starts_with("mbarrier.arrive_drop")) {
      V = B.arriveDrop(Count);
      Fx.Arrival = true;
    } else if (Op.starts_with("mbarrier.arrive") || Op.starts_with("tcgen05.commit") ||
               Op.starts_with("cp.async.mbarrier.arrive")) {
      V = B.arrive(Count);
      Fx.Arrival = true;
    } else if (Op.contains("complete_tx") && S.TxBytes) {
      V = B.completeTx(static_cast<uint32_t>(*S.TxBytes));
      Fx.Arrival = true;
    } else if (S.Probe && S.Parity) {
      Fx.Note = B.testWaitParity(*S.Parity) ? "sees the phase complete: the wait it decides is skipped"
                                            : "sees the phase incomplete: the wait it decides runs";
    } else if (Op.contains("wait") && S.Parity) {
      Fx.Note = B.testWaitParity(*S.Parity) ? "passes" : "blocks";
    }
    if (V != models::MbarrierViolation::None) {
      std::string Msg = "step " + std::to_string(I) + ": " + models::toString(V);
      Violations[{Rank, *S.Barrier, Slot}].push_back(Msg);
      Fx.Note = std::string("undefined: ") + models::toString(V);
    } else if (B.completedPhases() != Before) {
      Fx.Note = "completes " + Name(*S.Barrier, Slot) + " phase " +
                std::to_string(B.completedPhases() - 1) + " (parity " +
                std::to_string((B.completedPhases() - 1) & 1) + ")";
    }
  }
  // Slots that stuck waits name but no step touched still have a state: the initial one.
  for (const TraceStuck &R : T.Stuck)
    if (R.Wait.isMbarrier())
      Get(0, R.Wait.Barrier, R.Wait.Index);
  for (auto &[K, B] : Bars) {
    BarrierEndState St;
    std::tie(St.ClusterRank, St.Barrier, St.Slot) = K;
    St.Initialized = B.initialized();
    St.Expected = B.expected();
    St.Pending = B.pending();
    St.TxCount = B.txCount();
    St.CompletedPhases = B.completedPhases();
    St.Violations = Violations[K];
    E.States.push_back(std::move(St));
  }
  E.HaveStates = true;
}

} // namespace

std::string fixText(const Explanation &E) {
  if (E.T->isRace() && E.WaitFor.Why.Class == analyzer::BugClass::Unclassified)
    return "no check of the catalog names this race or barrier misuse; the steps above lead "
           "to it";
  return analyzer::fixAdvice(E.WaitFor.Why.Class);
}

Explanation explain(const Trace &T, const analyzer::Protocol *P, std::string PtxPath,
                    std::string NoProtocol) {
  Explanation E;
  E.T = &T;
  E.P = P;
  E.PtxPath = std::move(PtxPath);
  E.NoProtocol = std::move(NoProtocol);
  buildSnapshot(T, E);
  if (P)
    E.WaitFor = analyzer::analyzeWaitFor(*P, E.Snap);
  // A race or barrier misuse ends where nobody need be stuck: the class is the one the
  // solver named for it, and its fact the race itself.
  if (P && T.isRace()) {
    E.WaitFor.Why = {analyzer::bugClassOf(T.Check), {T.Reason}};
    if (T.Reason.empty())
      E.WaitFor.Why.Evidence.clear();
  }
  replay(T, P, E);
  if (T.fromSolver())
    E.Runs = stepRuns(T.Steps, E.Effects);
  return E;
}

} // namespace report
} // namespace wsv
