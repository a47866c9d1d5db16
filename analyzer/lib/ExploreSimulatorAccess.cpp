//===- ExploreSimulatorAccess.cpp - who may touch a buffer, and when ----------------===//
//
// The simulator's memory side: which buffer instances share bytes (Aliases), whose async
// groups a wait_group retires (Joined, retire: the thread's groups span the agents it
// continues), cp.async copies landing, and the race checks of a read or write of a buffer
// against what is in flight (checkAccess). ExploreSimulator.cpp applies the steps.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include "llvm/ADT/STLExtras.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

void Simulator::findAliases() {
  Aliases.resize(S.Buffers.size());
  const Protocol *P = S.P;
  if (P) {
    struct Span {
      const Expr *Base;
      int64_t Lo, Hi;
    };
    auto SpanOf = [&](const BufferInstance &I) {
      const Buffer &B = P->Buffers[I.Buffer];
      int64_t Size = B.SlotBytes ? int64_t(*B.SlotBytes) : B.Stride ? int64_t(B.Stride) : 1;
      int64_t Lo = B.Offset + int64_t(I.Slot) * int64_t(B.Stride);
      return Span{B.Base, Lo, Lo + std::max<int64_t>(Size, 1)};
    };
    for (unsigned X = 0; X < S.Buffers.size(); ++X)
      for (unsigned Y = 0; Y < S.Buffers.size(); ++Y) {
        if (X == Y || S.Buffers[X].Cta != S.Buffers[Y].Cta ||
            S.Buffers[X].Buffer == S.Buffers[Y].Buffer)
          continue;
        Span A = SpanOf(S.Buffers[X]), B = SpanOf(S.Buffers[Y]);
        if (A.Base && A.Base == B.Base && A.Lo < B.Hi && B.Lo < A.Hi)
          Aliases[X].push_back(Y);
      }
  }
  Joined.resize(S.Agents.size());
  if (!S.Programs)
    return;
  auto Place = [&](unsigned A) { return S.Programs->Programs[S.Agents[A].Program].Place; };
  for (unsigned E = 0; E < S.Agents.size(); ++E) {
    // The epilogue continues every thread: of the roles and of the prologue.
    if (Place(E) == Placement::Epilogue)
      for (unsigned R = 0; R < S.Agents.size(); ++R)
        if (R != E && S.Agents[R].Cta == S.Agents[E].Cta && Place(R) != Placement::Epilogue)
          Joined[E].push_back(R);
    // A role of every thread of the CTA, the only agent of its CTA that is a role,
    // continues the prologue's threads (their cp.async groups: a pipeline's prologue
    // issues the first stages that the main loop waits for). Where several roles share the
    // prologue's threads, none retires what the prologue's other threads issued.
    if (Place(E) != Placement::Role)
      continue;
    const RoleProgram &Me = S.Programs->Programs[S.Agents[E].Program];
    unsigned Roles = 0;
    for (unsigned R = 0; R < S.Agents.size(); ++R)
      Roles += S.Agents[R].Cta == S.Agents[E].Cta && Place(R) == Placement::Role;
    if (Roles != 1 || Me.Copies * Me.CopyThreads != S.BlockThreads)
      continue;
    for (unsigned R = 0; R < S.Agents.size(); ++R)
      if (S.Agents[R].Cta == S.Agents[E].Cta && Place(R) == Placement::Prologue)
        Joined[E].push_back(R);
  }
}

models::AsyncGroupQueue &Simulator::queue(AgentState &AS, AsyncQueue Q) {
  return Q == AsyncQueue::Bulk ? AS.Bulk : Q == AsyncQueue::CpAsync ? AS.CpAsync : AS.Wgmma;
}

void Simulator::landCopies(State &St, unsigned Agent, llvm::ArrayRef<uint32_t> Before) const {
  std::vector<uint32_t> After = St.Agents[Agent].CpAsync.inFlight();
  for (uint32_t Op : Before)
    if (!llvm::is_contained(After, Op))
      for (unsigned B : S.Agents[Agent].Steps[Op].Writes)
        St.Filled[B] = true;
}

void Simulator::retire(State &St, unsigned Agent, const ConcreteStep &Wait) const {
  // The thread's groups are its agent's and, older, those of the agents it continues
  // (Joined): a wait_group N keeps the N most recent of them all pending. Where several
  // agents' groups are older (the epilogue's roles), each keeps N: no fewer in flight than
  // the thread has, so that no read is taken for safe that is not.
  auto Retire = [&](unsigned Whose, std::optional<uint32_t> Keep) {
    models::AsyncGroupQueue &Q = queue(St.Agents[Whose], Wait.Queue);
    std::vector<uint32_t> Before;
    if (Wait.Queue == AsyncQueue::CpAsync)
      Before = Q.inFlight();
    if (Keep)
      Q.retire(*Keep, /*ReadOnly=*/false);
    else
      Q.completeAll(); // cp.async.wait_all: the open group too
    if (Wait.Queue == AsyncQueue::CpAsync)
      landCopies(St, Whose, Before);
  };
  if (Wait.WaitAll) {
    Retire(Agent, std::nullopt);
    for (unsigned R : Joined[Agent])
      Retire(R, std::nullopt);
    return;
  }
  uint32_t Own = queue(St.Agents[Agent], Wait.Queue).committedGroups();
  Retire(Agent, Wait.WaitN);
  uint32_t Left = Own >= Wait.WaitN ? 0 : Wait.WaitN - Own;
  for (unsigned R : Joined[Agent])
    Retire(R, Left);
}

Outcome Simulator::checkAccess(const State &St, unsigned B, bool Write, bool Async,
                               const ScheduleStep &T) const {
  Outcome O;
  if (IgnoreRaces)
    return O;
  auto Race = [&](std::string Message, ScheduleStep With, const char *Check = "") {
    O.K = Outcome::Kind::Race;
    O.Message = std::move(Message);
    O.Buffer = B;
    O.With = With;
    O.Check = Check;
    return O;
  };
  // Built only for a race: this runs for every access of every state.
  auto Name = [&] { return S.bufferName(B); };
  const ConcreteStep &Mine = S.Agents[T.Agent].Steps[T.Step];
  // Two copies of one role (warpgroups) reach their own parts of a slot when either
  // access is placed by the thread.
  auto OwnPart = [&](unsigned Agent, bool OtherPerCopy) {
    const ConcreteAgent &X = S.Agents[Agent], &Y = S.Agents[T.Agent];
    return Agent != T.Agent && X.Program == Y.Program && X.Cta == Y.Cta &&
           (Mine.PerCopy || OtherPerCopy);
  };
  if (!Write && Async)
    for (unsigned A = 0; A < S.Agents.size(); ++A)
      for (uint32_t U : St.Agents[A].Unfenced)
        if (U / 2 == B && !OwnPart(A, U & 1))
          return Race(Name() + " is read through the async proxy (" +
                          (Mine.Kind == StepKind::AsyncStore ? "a TMA store" : "an MMA") +
                          ") while the st.shared / stmatrix writes of " + S.Agents[A].Name +
                          " to it are not fenced: fence.proxy.async is missing after them",
                      T, "proxy-fence-missing");
  // A cp.async in flight: what its thread's own wait_group has not retired yet.
  auto CpAsyncInto = [&](unsigned &Agent) -> std::optional<uint32_t> {
    for (Agent = 0; Agent < S.Agents.size(); ++Agent)
      if (std::optional<uint32_t> Op = St.Agents[Agent].CpAsync.findInFlight([&](uint32_t Op) {
            return llvm::is_contained(S.Agents[Agent].Steps[Op].Writes, B) &&
                   !OwnPart(Agent, S.Agents[Agent].Steps[Op].PerCopy);
          }))
        return Op;
    return std::nullopt;
  };
  // A copy in flight where the reader released something since it last waited for the
  // copy's barrier refills a stage released before its reads were done; where it did not,
  // the read did not wait for the fill.
  auto Released = [&](const ConcreteStep &Copy) {
    const std::vector<ConcreteStep> &Steps = S.Agents[T.Agent].Steps;
    for (uint32_t Pc = T.Step; Pc-- > 0;) {
      const ConcreteStep &C = Steps[Pc];
      if (C.Kind == StepKind::Wait && llvm::is_contained(Copy.Targets, C.Barrier))
        return false;
      if (C.Kind == StepKind::Arrive || C.Kind == StepKind::MmaCommit)
        return true;
    }
    return false;
  };
  if (!Write) {
    for (const LoadInFlight &L : St.Loads)
      if (const ConcreteStep &Copy = S.Agents[L.Agent].Steps[L.Step];
          llvm::is_contained(Copy.Writes, B))
        return Race(Name() + " is read while the copy that fills it is in flight",
                    {ScheduleStep::Kind::Execute, L.Agent, L.Step, L.Copy},
                    Released(Copy) ? "smem-war-release" : "smem-raw-wait");
    unsigned Copier = 0;
    if (std::optional<uint32_t> Op = CpAsyncInto(Copier))
      return Race(Name() + " is read while a cp.async of " + S.Agents[Copier].Name +
                      " into it is in flight: no cp.async.wait_group of that thread retired it",
                  {ScheduleStep::Kind::Execute, Copier, *Op, 0}, "smem-raw-wait");
    if (!St.Filled[B])
      return Race(Name() + " is read before anything filled it", T, "smem-raw-wait");
    return O;
  }
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    const AgentState &AS = St.Agents[A];
    const std::vector<ConcreteStep> &Steps = S.Agents[A].Steps;
    auto Reads = [&](uint32_t Op) {
      return llvm::is_contained(Steps[Op].Reads, B) && !OwnPart(A, Steps[Op].PerCopy);
    };
    auto Overwritten = [&](const char *What, uint32_t Op, const char *Check) {
      return Race(Name() + " is overwritten while a " + What + " of " + S.Agents[A].Name +
                      " may still read it",
                  {ScheduleStep::Kind::Execute, A, Op, 0}, Check);
    };
    if (std::optional<uint32_t> Op = AS.Wgmma.findInFlight(Reads))
      return Overwritten("wgmma", *Op, "smem-war-release");
    for (uint32_t Op : AS.Tcgen05.inFlight())
      if (Reads(Op))
        return Overwritten("tcgen05.mma", Op, "smem-war-release");
    if (std::optional<uint32_t> Op = AS.Bulk.findInFlight(Reads, /*Reads=*/true))
      return Overwritten("bulk store", *Op, "bulk-store-reuse");
  }
  if (!Async)
    for (const LoadInFlight &L : St.Loads)
      if (llvm::is_contained(S.Agents[L.Agent].Steps[L.Step].Writes, B))
        return Race(Name() + " is written while a copy into it is in flight",
                    {ScheduleStep::Kind::Execute, L.Agent, L.Step, L.Copy});
  unsigned Copier = 0;
  if (std::optional<uint32_t> Op = CpAsyncInto(Copier))
    return Race(Name() + " is written while a cp.async of " + S.Agents[Copier].Name +
                    " into it is in flight",
                {ScheduleStep::Kind::Execute, Copier, *Op, 0});
  return O;
}
