//===- ExploreTmem.cpp - tcgen05 accumulators in tensor memory, by column -----------===//
//
// What the simulator knows of TMEM besides its allocation: which columns a tcgen05.mma in
// flight writes (until the commit after it arrives), which a tcgen05.ld still reads (until
// its thread's tcgen05.wait::ld) and which a tcgen05.st still writes (until its
// tcgen05.wait::st). Two of them on the same columns, one a write, race unless a barrier
// phase ordered them: a tcgen05.ld of an accumulator whose MMA may still run (no flush /
// mma2ld wait), an MMA over columns a tcgen05.ld still reads (no ld2mma wait, or a release
// before wait::ld), and an MMA and a tcgen05.st on the same columns at once (Triton zeroes
// its accumulators with tcgen05.st before the first MMA).
// The columns are the MMAs' distinct ranges (TmemRegions), per CTA. Lanes are not told
// apart: an MMA writes every lane of its columns, but a warp's tcgen05.ld and tcgen05.st
// reach only its own quarter of the lanes, so those of different agents (different warps,
// as a rule) are not checked against each other, nor a thread's own ld against its st.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include "llvm/ADT/STLExtras.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

void Simulator::initTmem(unsigned &Bits) {
  // One resource per CTA and distinct MMA column range (B5's two buffers of 256 columns),
  // so that a read of one buffer does not depend on the MMAs of the other; more than eight
  // ranges (or one not known) share one resource.
  for (const ConcreteAgent &Ag : S.Agents)
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::MmaIssue && C.Queue == AsyncQueue::Tcgen05 &&
          !llvm::is_contained(TmemRegions, std::pair{C.TmemFirst, C.TmemEnd}))
        TmemRegions.push_back({C.TmemFirst, C.TmemEnd});
  if (TmemRegions.size() > 8)
    TmemRegions.assign(1, {0, 1u << 16});
  unsigned PerKind = S.ClusterSize * std::max<size_t>(1, TmemRegions.size());
  TmemAccBase = Bits;
  TmemLdBase = Bits + PerKind;
  TmemStBase = Bits + 2 * PerKind;
  Bits += 3 * PerKind;
  for (const ConcreteAgent &Ag : S.Agents) {
    TmemReadRegions.push_back(0);
    TmemWriteRegions.push_back(0);
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::TmemRead)
        TmemReadRegions.back() |= tmemRegions(C.TmemFirst, C.TmemEnd);
      else if (C.Kind == StepKind::TmemWrite)
        TmemWriteRegions.back() |= tmemRegions(C.TmemFirst, C.TmemEnd);
  }
}

uint32_t Simulator::tmemRegions(uint32_t First, uint32_t End) const {
  uint32_t Mask = 0;
  for (unsigned R = 0; R < TmemRegions.size(); ++R)
    if (TmemRegions[R].first < End && First < TmemRegions[R].second)
      Mask |= uint32_t(1) << R;
  return Mask;
}

void Simulator::touchTmem(Footprint &F, unsigned Base, unsigned Cta, uint32_t Mask,
                          bool Read) const {
  for (unsigned R = 0; R < TmemRegions.size(); ++R)
    if (Mask >> R & 1) {
      unsigned Bit = Base + Cta * TmemRegions.size() + R;
      Read ? addRead(F, Bit) : addUpdate(F, Bit);
    }
}

void Simulator::tmemFootprint(Footprint &F, unsigned Agent, const ConcreteStep &C) const {
  // MMAs in flight (TmemAccBase), tcgen05.ld reads (TmemLdBase) and tcgen05.st writes
  // (TmemStBase) not waited for: each kind of step updates its own state and reads the
  // others' that it races with. Updates of one kind commute (MMAs with MMAs; each agent
  // keeps its own reads and writes). Past a race none of it is kept (tmemAccess): the
  // columns would only keep steps that commute from being taken alone.
  if (IgnoreRaces)
    return;
  unsigned Cta = S.Agents[Agent].Cta;
  uint32_t Mask = tmemRegions(C.TmemFirst, C.TmemEnd);
  switch (C.Kind) {
  case StepKind::MmaIssue:
    // Its completion's footprint is its issue's (tcgen05InFlight).
    for (unsigned Own : {Cta, Cta ^ 1})
      if (Own == Cta || (C.TmemPair && Own < S.ClusterSize)) {
        touchTmem(F, TmemAccBase, Own, Mask, /*Read=*/false);
        touchTmem(F, TmemLdBase, Own, Mask, /*Read=*/true);
        touchTmem(F, TmemStBase, Own, Mask, /*Read=*/true);
      }
    break;
  case StepKind::TmemRead:
    touchTmem(F, TmemAccBase, Cta, Mask, /*Read=*/true);
    touchTmem(F, TmemLdBase, Cta, Mask, /*Read=*/false);
    break;
  case StepKind::TmemWrite:
    touchTmem(F, TmemAccBase, Cta, Mask, /*Read=*/true);
    touchTmem(F, TmemStBase, Cta, Mask, /*Read=*/false);
    break;
  case StepKind::TmemWait:
    touchTmem(F, TmemLdBase, Cta, TmemReadRegions[Agent], /*Read=*/false);
    break;
  case StepKind::TmemWriteWait:
    touchTmem(F, TmemStBase, Cta, TmemWriteRegions[Agent], /*Read=*/false);
    break;
  default:
    break;
  }
}

std::optional<ScheduleStep> Simulator::tmemWriter(const State &St, unsigned Cta,
                                                  const ConcreteStep &Read) const {
  // A tcgen05.mma writes its accumulator until it completes, which the model lets happen
  // any time before the commit after it arrives: a read of its columns before that races.
  // One of .cta_group::2 writes the columns of both CTAs of its pair.
  for (unsigned W = 0; W < S.Agents.size(); ++W) {
    const ConcreteAgent &Ag = S.Agents[W];
    if (Ag.Cta != Cta && Ag.Cta / 2 != Cta / 2)
      continue;
    for (uint32_t Op : St.Agents[W].Tcgen05.inFlight()) {
      const ConcreteStep &M = Ag.Steps[Op];
      if (M.Kind != StepKind::MmaIssue || (Ag.Cta != Cta && !M.TmemPair))
        continue;
      if (M.TmemFirst < Read.TmemEnd && Read.TmemFirst < M.TmemEnd)
        return ScheduleStep{ScheduleStep::Kind::Execute, W, Op, 0};
    }
  }
  return std::nullopt;
}

std::optional<ScheduleStep> Simulator::tmemPending(const State &St, unsigned Cta, bool Pair,
                                                   uint32_t Mask, StepKind Kind) const {
  for (unsigned R = 0; R < S.Agents.size(); ++R) {
    const ConcreteAgent &Ag = S.Agents[R];
    const AgentState &AS = St.Agents[R];
    uint32_t Pending =
        (Kind == StepKind::TmemRead ? AS.TmemLoading : AS.TmemStoring) & Mask;
    if (!Pending || (Ag.Cta != Cta && !(Pair && Ag.Cta / 2 == Cta / 2)))
      continue;
    for (uint32_t Pc = std::min<size_t>(AS.Pc, Ag.Steps.size()); Pc-- > 0;)
      if (Ag.Steps[Pc].Kind == Kind &&
          (tmemRegions(Ag.Steps[Pc].TmemFirst, Ag.Steps[Pc].TmemEnd) & Pending))
        return ScheduleStep{ScheduleStep::Kind::Execute, R, Pc, 0};
  }
  return std::nullopt;
}

std::string Simulator::columns(const ConcreteStep &C) {
  if (C.TmemFirst == 0 && C.TmemEnd >= (1u << 16))
    return "columns not known (taken as all of them)";
  return "columns " + std::to_string(C.TmemFirst) + " to " + std::to_string(C.TmemEnd - 1);
}

Outcome Simulator::tmemAccess(State &St, unsigned Agent, const ConcreteStep &C) const {
  AgentState &AS = St.Agents[Agent];
  const ConcreteAgent &A = S.Agents[Agent];
  uint32_t Mask = tmemRegions(C.TmemFirst, C.TmemEnd);
  Outcome O;
  // `<what> of <agent> <verb> TMEM <columns> while the <other> of <agent> that <verb>s
  // <columns> may still run: <what would have ordered them>`.
  auto Race = [&](const std::string &Mine, const ScheduleStep &Other, const char *Theirs,
                  const char *TheirVerb, const char *Missing) {
    const ConcreteStep &X = S.Agents[Other.Agent].Steps[Other.Step];
    O.K = Outcome::Kind::Race;
    O.Message = Mine + " TMEM " + columns(C) + " while the " + Theirs + " of " +
                S.Agents[Other.Agent].Name + " that " + TheirVerb + " " + columns(X) +
                " may still run: " + Missing;
    O.With = Other;
    O.Check = "accumulator-early-read";
    return O;
  };
  const char *NoCommitWait =
      "no wait on a barrier that a tcgen05.commit after it arrives on came first";
  const char *NoLdRelease =
      "no wait on a barrier that its reader arrives on after tcgen05.wait::ld came first";
  const char *NoStRelease =
      "no wait on a barrier that its writer arrives on after tcgen05.wait::st came first";
  switch (C.Kind) {
  case StepKind::MmaIssue:
    if (IgnoreRaces)
      break;
    if (auto R = tmemPending(St, A.Cta, C.TmemPair, Mask, StepKind::TmemRead))
      return Race("the tcgen05.mma of " + A.Name + " writes", *R, "tcgen05.ld", "reads",
                  NoLdRelease);
    if (auto W = tmemPending(St, A.Cta, C.TmemPair, Mask, StepKind::TmemWrite))
      return Race("the tcgen05.mma of " + A.Name + " writes", *W, "tcgen05.st", "writes",
                  NoStRelease);
    break;
  case StepKind::TmemRead:
  case StepKind::TmemWrite: {
    bool Load = C.Kind == StepKind::TmemRead;
    std::string Mine = std::string(Load ? "tcgen05.ld of " : "tcgen05.st of ") + A.Name +
                       (Load ? " reads" : " writes");
    if (IgnoreRaces)
      break; // nothing but a race reads the columns (and kept, they split equal states)
    if (auto M = tmemWriter(St, A.Cta, C))
      return Race(Mine, *M, "tcgen05.mma", "writes", NoCommitWait);
    (Load ? AS.TmemLoading : AS.TmemStoring) |= Mask;
    break;
  }
  case StepKind::TmemWait:
    AS.TmemLoading = 0;
    break;
  case StepKind::TmemWriteWait:
    AS.TmemStoring = 0;
    break;
  default:
    break;
  }
  return O;
}
