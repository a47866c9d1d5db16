//===- ExploreMisuse.cpp - barrier misuses and the check each is the symptom of ------===//
//
// A misuse (a violation) ends a schedule: a barrier used before its init or after its CTA
// exited, an arrival past what a phase has pending, a partial collective. Which check of
// DESIGN.md's catalog it is the symptom of is what `wsv explain` diagnoses it by. The
// simulator names it from the state where it can (barrierCheck); two need the steps before
// it, which replay has (MisuseHistory): an arrival past the phase by threads that already
// arrived in it, and a CTA's own copy that lands after the CTA exited.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/Roles.h"

#include "llvm/ADT/STLExtras.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

Outcome Simulator::afterExit(const State &St, const ConcreteStep &C, const ScheduleStep &T,
                             bool Lands) const {
  // A CTA's shared memory and barriers end with it: a peer's arrival, multicast or remote
  // copy reaching them later is undefined (the peer must not run past a cluster barrier
  // that the exiting CTA joins last). A copy or tcgen05.commit landing after its own CTA
  // exited is as bad: the CTA left with it in flight, and its memory may be another's.
  Outcome O;
  auto Gone = [&](unsigned Cta, const std::string &What, unsigned Barrier) {
    O.K = Outcome::Kind::Violation;
    O.Message = What + " after CTA " + std::to_string(Cta) + " exited";
    O.With = T;
    O.LateBarrier = Barrier;
  };
  unsigned Own = T.K == ScheduleStep::Kind::Execute ? S.Agents[T.Agent].Cta : NoIndex;
  // A peer's step reaching a CTA that left is what cluster-exit-early is about; a CTA's
  // own work landing late follows from some other bug.
  auto Reaches = [&](unsigned Barrier, const char *How) {
    unsigned Cta = S.Barriers[Barrier].Cta;
    if (Cta != Own && O.K == Outcome::Kind::Ok && exited(St, Cta)) {
      Gone(Cta, std::string(How) + " " + S.barrierName(Barrier), Barrier);
      O.LateLanding = Lands;
      if (!Lands)
        O.Check = "cluster-exit-early";
    }
  };
  if (Lands && S.Programs && S.Programs->LateLandingsDropped)
    return O; // landsAt() drops what reaches a CTA that left
  if (Lands) {
    for (unsigned B : C.Targets)
      Reaches(B, C.Kind == StepKind::MmaCommit ? "a tcgen05.commit arrives on"
                                                : "a copy lands on");
    return O;
  }
  if (C.Kind == StepKind::Arrive && C.Barrier != NoIndex)
    Reaches(C.Barrier, "arrival on");
  if (C.Kind == StepKind::MmaCommit || C.Kind == StepKind::AsyncLoad)
    for (unsigned B : C.Targets)
      Reaches(B, C.Kind == StepKind::MmaCommit ? "commit arrival on" : "copy issued to");
  return O;
}

Outcome Simulator::unpublished(const State &St, unsigned Barrier, const std::string &What,
                               const ScheduleStep &T) const {
  Outcome O;
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (llvm::is_contained(St.Agents[A].Unpublished, Barrier)) {
      O.K = Outcome::Kind::Violation;
      O.UnpublishedInit = true;
      O.Check = "mbarrier-init-visibility";
      O.Message = What + " reaches " + S.barrierName(Barrier) + ", whose init by " +
                  S.Agents[A].Name + " no fence.mbarrier_init has made visible to it";
      O.With = T;
      break;
    }
  return O;
}

const char *Simulator::barrierCheck(const State &St, unsigned Barrier,
                                    models::MbarrierViolation V) const {
  switch (V) {
  case models::MbarrierViolation::NotInitialized:
    // Used after an mbarrier.inval some agent ran: the memory was handed back too early.
    for (unsigned A = 0; A < S.Agents.size(); ++A)
      for (uint32_t Pc = 0; Pc < std::min<size_t>(St.Agents[A].Pc, S.Agents[A].Steps.size());
           ++Pc)
        if (S.Agents[A].Steps[Pc].Kind == StepKind::Inval &&
            S.Agents[A].Steps[Pc].Barrier == Barrier)
          return "mbarrier-reuse";
    return "mbarrier-init-visibility";
  case models::MbarrierViolation::ReinitWhileInUse:
    return "mbarrier-reuse";
  case models::MbarrierViolation::PendingUnderflow:
  case models::MbarrierViolation::CountOutOfRange:
  case models::MbarrierViolation::ExpectedUnderflow:
    // An arriver that ran a phase ahead (phase-skip) looks the same here; replay, which
    // has the schedule, tells them apart (Explore.cpp).
    return "mbarrier-arrival-count";
  case models::MbarrierViolation::TxOutOfRange:
    return "mbarrier-tx-bytes";
  case models::MbarrierViolation::None:
    break;
  }
  return "";
}

namespace {

/// Whether two steps (agent, step) may be run by the same threads: those of one agent, or
/// of agents of one CTA whose events' threads overlap (a prologue's elected lane of warp 0
/// and a role's of the same warp).
bool sameThreads(const ConcreteSystem &S, std::pair<unsigned, unsigned> X,
                 std::pair<unsigned, unsigned> Y) {
  if (X.first == Y.first)
    return true;
  const ConcreteAgent &A = S.Agents[X.first], &B = S.Agents[Y.first];
  if (A.Cta != B.Cta || !S.P)
    return false;
  unsigned EA = A.Steps[X.second].Event, EB = B.Steps[Y.second].Event;
  if (EA >= S.P->Events.size() || EB >= S.P->Events.size())
    return false;
  const ThreadSet &TA = S.P->Events[EA].Threads, &TB = S.P->Events[EB].Threads;
  if (TA.isUnknown() || TB.isUnknown())
    return false;
  return reachingThreads(TA).anyCommon(reachingThreads(TB));
}

/// A copy that lands on barrier Late after its CTA exited, the schedule Before leading up
/// to it: no thread waited for the phase it completes. Where the copies into that barrier
/// array bring more bytes than its arrive.expect_tx announced, phases completed without
/// them (mbarrier-tx-bytes). Else, where every role that waits on the array (by its
/// program) waited as often as the array was armed, it waited on phases that had passed
/// (mbarrier-phase-skip: a stage and phase restarted per tile). "" otherwise.
const char *lateLandingCheck(const ConcreteSystem &S, llvm::ArrayRef<ScheduleStep> Before,
                             unsigned Late) {
  if (Late >= S.Barriers.size())
    return "";
  const BarrierInstance &Landed = S.Barriers[Late];
  auto SameArray = [&](unsigned B) {
    return B < S.Barriers.size() && S.Barriers[B].Array == Landed.Array &&
           S.Barriers[B].Cta == Landed.Cta;
  };
  uint64_t Armed = 0, Announced = 0, Brought = 0;
  std::vector<uint64_t> Waits(S.Agents.size(), 0);
  for (const ScheduleStep &T : Before) {
    if (T.K != ScheduleStep::Kind::Execute || T.Step >= S.Agents[T.Agent].Steps.size())
      continue;
    const ConcreteStep &C = S.Agents[T.Agent].Steps[T.Step];
    if (C.Kind == StepKind::AsyncLoad)
      for (unsigned B : C.Targets)
        if (SameArray(B))
          Brought += uint64_t(C.TxBytes) * std::max(1u, C.Count);
    if (!SameArray(C.Barrier))
      continue;
    if ((C.Kind == StepKind::Arrive || C.Kind == StepKind::ExpectTx) && C.TxBytes) {
      Armed += C.Kind == StepKind::Arrive;
      Announced += C.TxBytes;
    }
    if (C.Kind == StepKind::Wait)
      ++Waits[T.Agent];
  }
  if (!Armed)
    return "";
  if (Brought > Announced)
    return "mbarrier-tx-bytes";
  // A waiter by its program: a role whose loop runs no iteration for this launch (B3's
  // MMA over K / 64 - 1 k-tiles at K = 64) has no wait among its steps, and waited 0 times.
  auto WaitsOnIt = [&](const ConcreteAgent &A) {
    if (A.Cta != Landed.Cta)
      return false;
    if (S.Programs && A.Program < S.Programs->Programs.size())
      return llvm::any_of(S.Programs->Programs[A.Program].Steps, [&](const RoleStep &St) {
        return St.Kind == StepKind::Wait && St.Barrier.Array == Landed.Array;
      });
    return llvm::any_of(A.Steps, [&](const ConcreteStep &C) {
      return C.Kind == StepKind::Wait && SameArray(C.Barrier);
    });
  };
  bool Any = false, Fewer = false;
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (WaitsOnIt(S.Agents[A])) {
      Any = true;
      Fewer = Fewer || Waits[A] < Armed;
    }
  // Fewer waits than fills: a role that ran fewer iterations (trip-count) and one that
  // skips a wait it should make (smem-raw-wait, H1's variant) look alike here; neither is
  // named.
  return Any && !Fewer ? "mbarrier-phase-skip" : "";
}

} // namespace

void MisuseHistory::classify(Outcome &O, llvm::ArrayRef<ScheduleStep> Before,
                             const ScheduleStep &T) const {
  if (O.K != Outcome::Kind::Violation)
    return;
  // An arrival past the phase's count by threads that arrived in it already ran a phase
  // ahead (B1's prefill of one stage too many) rather than finding no room in the count.
  unsigned Target = arrivalTarget(T);
  if (Target != NoIndex && llvm::StringRef(O.Check) == "mbarrier-arrival-count" &&
      llvm::any_of(ArrivedInPhase[Target], [&](std::pair<unsigned, unsigned> Earlier) {
        return sameThreads(S, Earlier, {T.Agent, T.Step});
      }))
    O.Check = "mbarrier-phase-skip";
  if (!*O.Check && O.LateBarrier != NoIndex && T.K == ScheduleStep::Kind::Complete)
    O.Check = lateLandingCheck(S, Before, O.LateBarrier);
}

void MisuseHistory::observe(const State &St, const ScheduleStep &T) {
  unsigned Target = arrivalTarget(T);
  for (unsigned B = 0; B < S.Barriers.size(); ++B)
    if (St.Barriers[B].completedPhases() != Phases[B]) {
      Phases[B] = St.Barriers[B].completedPhases();
      ArrivedInPhase[B].clear();
    } else if (B == Target) {
      ArrivedInPhase[B].push_back({T.Agent, T.Step});
    }
}

unsigned MisuseHistory::arrivalTarget(const ScheduleStep &T) const {
  if (T.K != ScheduleStep::Kind::Execute || T.Agent >= S.Agents.size())
    return NoIndex;
  const std::vector<ConcreteStep> &Steps = S.Agents[T.Agent].Steps;
  if (T.Step >= Steps.size() || Steps[T.Step].Kind != StepKind::Arrive ||
      Steps[T.Step].Barrier >= S.Barriers.size())
    return NoIndex;
  return Steps[T.Step].Barrier;
}
