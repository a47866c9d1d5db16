//===- RoleProgramParts.cpp - an instance's agents after unrolling, and their parts ----===//
//
// Private to RoleProgramInstance.cpp (InstanceParts.h): what the instantiation does to the
// agents once every one is unrolled (epilogue steps moved to the roles whose threads run
// them, named barriers one agent completes alone dropped), the folding of steps nothing can
// tell apart as they are appended, and the helpers of threads that part where a loop's trip
// count differs between them (ConcreteAgent::After).
//
//===----------------------------------------------------------------------------------===//
#include "InstanceParts.h"

#include "wsv/analyzer/Roles.h"
#include "wsv/models/NamedBarrier.h"

#include <algorithm>
#include <map>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// A barrier every thread of the CTA takes part in (bar.sync 0, barrier.cluster).
bool allThreads(const ConcreteSystem &Out, const ConcreteStep &C) {
  return ((C.Kind == StepKind::NamedSync || C.Kind == StepKind::NamedArrive) &&
          C.Count >= Out.BlockThreads) ||
         C.Kind == StepKind::ClusterArrive || C.Kind == StepKind::ClusterWait;
}

/// A role of CTA Cta whose last step is not a barrier of every thread (nullptr: none). Where
/// every role ends at one, no thread gets past it before every role's last step: the
/// epilogue after it does run after every role finished. Otherwise a thread of a role that
/// ended early reaches the epilogue while the others still work (B1 without the
/// __syncthreads that ends each k-tile: warps 1-3 read the accumulator during the MMAs).
const ConcreteAgent *roleNotJoined(const ConcreteSystem &Out, unsigned Cta) {
  for (const ConcreteAgent &A : Out.Agents)
    if (A.Place == Placement::Role && A.Cta == Cta && !A.Forked && !A.Steps.empty() &&
        !allThreads(Out, A.Steps.back()))
      return &A;
  return nullptr;
}

} // namespace

void instance::startEpiloguesEarly(ConcreteSystem &Out) {
  const Protocol &P = *Out.P;
  for (ConcreteAgent &E : Out.Agents) {
    if (E.Place != Placement::Epilogue)
      continue;
    size_t Kept = 0, I = 0;
    bool Waited = false; // an mbarrier wait kept before
    for (; I < E.Steps.size(); ++I) {
      const ConcreteStep &C = E.Steps[I];
      if (allThreads(Out, C))
        break;
      llvm::BitVector Threads = reachingThreads(P.Events[C.Event].Threads);
      ConcreteAgent *Owner = nullptr;
      unsigned Owners = 0;
      for (ConcreteAgent &A : Out.Agents) {
        // A forked agent's threads end in its parts (ConcreteAgent::After).
        if (A.Place != Placement::Role || A.Cta != E.Cta || A.Forked || Threads.none())
          continue;
        bool Holds;
        if (A.Mask.empty()) {
          Holds = unsigned(Threads.find_first()) >= A.FirstThread &&
                  unsigned(Threads.find_last()) < A.FirstThread + std::max(1u, A.Threads);
        } else {
          llvm::BitVector Outside = Threads;
          Outside.resize(std::max(Outside.size(), A.Mask.size()));
          llvm::BitVector In = A.Mask;
          In.resize(Outside.size());
          Holds = !Outside.reset(In).any();
        }
        if (Holds)
          Owner = &A, ++Owners;
      }
      if (Owners == 1) { // epilogues have no cycles: nothing to renumber
        Owner->Steps.push_back(C);
        continue;
      }
      // The model starts it once every role finished. Where no barrier of the PTX makes it
      // so, a thread that left its role early runs it while the others still work: the
      // model has only some of the schedules then (its bugs are real, its proofs are none),
      // and an access to what they use is a race it would miss. A wait on an mbarrier is
      // what holds such a thread back (B6's epilogue waits for the MMA's last commit), and
      // a wait on its own async groups touches nothing of theirs.
      Waited |= C.Kind == StepKind::Wait;
      if (!Waited && C.Kind != StepKind::GroupWait && Out.UnjoinedEpilogue.empty())
        if (const ConcreteAgent *Early = roleNotJoined(Out, E.Cta))
          Out.UnjoinedEpilogue =
              "the epilogue's " + std::string(toString(C.Kind)) + " at ptx line " +
              std::to_string(P.Events[C.Event].Where.PtxLine) +
              " is run by the threads of several roles, and no barrier of every thread "
              "after " + Early->Name + "'s last step (ptx line " +
              std::to_string(P.Events[Early->Steps.back().Event].Where.PtxLine) +
              ") holds them back until every role finished";
      if (Kept == 0) {
        std::string Assumed = "the epilogue's " + std::string(toString(C.Kind)) +
                              " at ptx line " +
                              std::to_string(P.Events[C.Event].Where.PtxLine) +
                              " runs after every role of its CTA finished";
        if (!llvm::is_contained(Out.Assumptions, Assumed))
          Out.Assumptions.push_back(Assumed);
      }
      E.Steps[Kept++] = C;
    }
    for (; I < E.Steps.size(); ++I)
      E.Steps[Kept++] = E.Steps[I];
    E.Steps.resize(Kept);
  }
}

void instance::dropPrivateNamedBarriers(ConcreteSystem &Out) {
  auto IsNamed = [](const ConcreteStep &C) {
    return C.Kind == StepKind::NamedSync || C.Kind == StepKind::NamedArrive;
  };
  // (CTA, id) -> the one agent using it, or NoIndex once a second agent does or one of
  // its steps does not complete the barrier alone.
  std::map<std::pair<unsigned, uint32_t>, unsigned> Private;
  for (unsigned A = 0; A < Out.Agents.size(); ++A)
    for (const ConcreteStep &C : Out.Agents[A].Steps) {
      if (!IsNamed(C))
        continue;
      auto [It, New] = Private.emplace(std::pair{Out.Agents[A].Cta, C.NamedId}, A);
      models::NamedBarrierFile Fresh;
      uint64_t Ticket = 0;
      bool Alone = Fresh.arrive(C.NamedId, C.Count, C.Arriving, Ticket) ==
                       models::NamedBarrierViolation::None &&
                   Fresh.passed(C.NamedId, Ticket);
      if (!Alone || It->second != A)
        It->second = NoIndex;
    }
  for (unsigned A = 0; A < Out.Agents.size(); ++A) {
    std::vector<ConcreteStep> &Steps = Out.Agents[A].Steps;
    Steps.erase(std::remove_if(Steps.begin(), Steps.end(),
                               [&](const ConcreteStep &C) {
                                 bool Drop = IsNamed(C) &&
                                             Private[{Out.Agents[A].Cta, C.NamedId}] == A;
                                 if (Drop)
                                   Out.Elided.push_back({Out.Agents[A].Program, C.RoleStep});
                                 return Drop;
                               }),
                Steps.end());
  }
}

bool instance::inFlightAtEnd(const ConcreteAgent &A) {
  bool Open[5] = {false, false, false, false, false};
  for (const ConcreteStep &C : A.Steps) {
    unsigned Q = static_cast<unsigned>(C.Queue);
    if (C.Kind == StepKind::MmaIssue || C.Kind == StepKind::AsyncStore ||
        (C.Kind == StepKind::AsyncLoad && C.Queue == AsyncQueue::CpAsync))
      Open[Q] = true;
    else if (C.Kind == StepKind::GroupWait && C.WaitN == 0 && !C.ReadOnly)
      Open[Q] = false;
    else if (C.Kind == StepKind::MmaCommit)
      Open[static_cast<unsigned>(AsyncQueue::Tcgen05)] = false;
  }
  return Open[1] || Open[2] || Open[3] || Open[4];
}

std::string wsv::analyzer::threadList(const llvm::BitVector &T) {
  std::string Out;
  for (int I = T.find_first(); I >= 0;) {
    int J = I;
    while (J + 1 < int(T.size()) && T.test(J + 1))
      ++J;
    Out += (Out.empty() ? "" : ", ") + std::to_string(I) +
           (J > I ? "-" + std::to_string(J) : std::string());
    I = T.find_next(J);
  }
  return Out;
}

unsigned instance::firstEvent(const RoleProgram &R, const std::vector<RoleItem> &Items) {
  for (const RoleItem &It : Items) {
    unsigned E = It.IsLoop ? firstEvent(R, R.Loops[It.Index].Body) : R.Steps[It.Index].Event;
    if (E != NoIndex)
      return E;
  }
  return NoIndex;
}

std::string instance::splitUnit(const Protocol &P, const RoleStep &S, unsigned Unit,
                                const llvm::BitVector &Mask, const llvm::BitVector &Whole) {
  const Event &E = P.Events[S.Event];
  const char *What = "runs a collective of";
  if (S.Kind == StepKind::NamedSync || S.Kind == StepKind::NamedArrive) {
    Unit = WarpSize;
    What = "counts at a named barrier as one warp of";
  } else if (!E.Threads.isUnknown() && !E.Threads.elected().empty()) {
    Unit = WarpSize;
    What = "elects one lane of";
  }
  if (!Unit)
    return {};
  for (unsigned First = 0; First < Mask.size(); First += Unit) {
    unsigned End = std::min<unsigned>(First + Unit, Mask.size());
    bool Mine = false, Others = false;
    for (unsigned T = First; T < End; ++T) {
      Mine |= Mask.test(T);
      Others |= Whole.test(T) && !Mask.test(T);
    }
    if (Mine && Others)
      return "the hardware " + std::string(What) + " threads " + std::to_string(First) + "-" +
             std::to_string(End - 1) + " together, and their trip counts differ (" +
             E.Opcode + ", ptx line " + std::to_string(E.Where.PtxLine) + ")";
  }
  return {};
}

void instance::appendStep(ConcreteAgent &A, ConcreteStep C) {
  // TMEM columns of two steps that touch adjacent or overlapping ones are one range: the
  // steps may become one; others stay apart, so that no column between them is taken as
  // touched (B5's two accumulators of 256 columns).
  auto Contiguous = [](const ConcreteStep &X, const ConcreteStep &Y) {
    return X.TmemFirst <= Y.TmemEnd && Y.TmemFirst <= X.TmemEnd;
  };
  // Back-to-back generic accesses of one agent (four stmatrix into one staging slot) are
  // one step: nothing can happen between them that another agent could tell.
  if ((C.Kind == StepKind::Write || C.Kind == StepKind::Read ||
       C.Kind == StepKind::AccumulatorRead || C.Kind == StepKind::TmemRead ||
       C.Kind == StepKind::TmemWrite) &&
      !A.Steps.empty()) {
    ConcreteStep &Prev = A.Steps.back();
    if (Prev.Kind == C.Kind && Prev.Reads == C.Reads && Prev.Writes == C.Writes &&
        Prev.PerCopy == C.PerCopy && Prev.Accumulators == C.Accumulators &&
        Contiguous(Prev, C)) {
      Prev.Folded.push_back(C.RoleStep);
      // (TMEM reads: the columns from the first one's to the last one's.)
      Prev.TmemFirst = std::min(Prev.TmemFirst, C.TmemFirst);
      Prev.TmemEnd = std::max(Prev.TmemEnd, C.TmemEnd);
      return;
    }
  }
  // Back-to-back MMAs of one agent are one operation: no wait_group or tcgen05.commit can
  // tell them apart, and one operation keeps the explorer from ordering their completions.
  if (C.Kind == StepKind::MmaIssue && !A.Steps.empty()) {
    ConcreteStep &Prev = A.Steps.back();
    if (Prev.Kind == StepKind::MmaIssue && Prev.Queue == C.Queue &&
        (C.Queue != AsyncQueue::Tcgen05 || Contiguous(Prev, C))) {
      Prev.Accumulators |= C.Accumulators;
      Prev.TmemFirst = std::min(Prev.TmemFirst, C.TmemFirst);
      Prev.TmemEnd = std::max(Prev.TmemEnd, C.TmemEnd);
      Prev.TmemPair |= C.TmemPair;
      Prev.Folded.push_back(C.RoleStep);
      for (unsigned B : C.Reads)
        if (std::find(Prev.Reads.begin(), Prev.Reads.end(), B) == Prev.Reads.end())
          Prev.Reads.push_back(B);
      return;
    }
  }
  A.Steps.push_back(std::move(C));
}
