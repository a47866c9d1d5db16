//===- ExplainText.cpp - `wsv explain` as text ---------------------------------------===//
//
// Sections in the order a reader asks the questions: what ran; where each role is stuck (the
// schedule first, for solver traces); the barriers; who waits on whom; what class of bug that
// is; and the fix. Every wait and arrival carries its PTX line and CUDA line.
//
//===----------------------------------------------------------------------------------===//
#include "Explain.h"

#include "wsv/analyzer/ProtocolPrinter.h"

#include "llvm/Support/Format.h"

#include <algorithm>

namespace wsv {
namespace report {

namespace {

std::string dims(const Dim3 &D) {
  return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" + std::to_string(D[2]);
}

const char *completionWord(analyzer::EventKind K) {
  using analyzer::EventKind;
  switch (K) {
  case EventKind::Arrive: return "arrive";
  case EventKind::ArriveExpectTx: return "arrive.expect_tx";
  case EventKind::CompleteTx: return "complete_tx";
  case EventKind::AsyncLoad: return "TMA";
  case EventKind::MmaCommit: return "commit";
  case EventKind::CpAsyncArrive: return "cp.async arrive";
  case EventKind::TryCancel: return "try_cancel";
  case EventKind::NamedBarrier: return "bar";
  default: return "event";
  }
}

/// `arrive.expect_tx ptx 190, TMA ptx 195, 199`.
std::string completionsText(const analyzer::Protocol &P,
                            const std::vector<analyzer::EventSite> &Sites) {
  std::string Out, Last;
  for (const analyzer::EventSite &S : Sites) {
    const analyzer::Event &Ev = P.Events[S.Event];
    std::string Word = completionWord(Ev.Kind);
    if (Word == "bar")
      Word = Ev.Opcode;
    if (Word != Last)
      Out += (Out.empty() ? "" : ", ") + Word + " ptx " + std::to_string(Ev.Where.PtxLine);
    else
      Out += ", " + std::to_string(Ev.Where.PtxLine);
    Last = Word;
  }
  return Out;
}

std::string waitLines(const Explanation &E, unsigned G) {
  std::string Out;
  for (const analyzer::EventSite &S : E.WaitFor.Matches[G].Waits)
    Out += (Out.empty() ? "" : "; ") + eventWhere(*E.P, S.Event);
  return Out;
}

/// The first PTX line of a stuck wait, with a count of the others (unrolled copies).
std::string firstWaitLine(const Explanation &E, unsigned G) {
  const std::vector<analyzer::EventSite> &W = E.WaitFor.Matches[G].Waits;
  std::string Out = eventWhere(*E.P, W.front().Event);
  if (W.size() > 1)
    Out += " and " + std::to_string(W.size() - 1) + " more";
  return Out;
}

void printHeader(const Explanation &E, llvm::raw_ostream &OS) {
  const Trace &T = *E.T;
  OS << "kernel " << T.Kernel << " (" << T.Entry << ")";
  if (!T.Variant.empty())
    OS << ", variant " << T.Variant;
  OS << ": " << (T.fromSolver() ? "solver counterexample" : "hardware capture") << '\n';
  OS << "  launch grid " << dims(T.Launch.Grid) << ", block " << dims(T.Launch.Block)
     << ", cluster " << dims(T.Launch.Cluster) << ";";
  if (T.Launch.K)
    OS << " M=" << T.Launch.M << " N=" << T.Launch.N << " K=" << T.Launch.K << " "
       << T.Launch.Dtype;
  for (const auto &[Name, Value] : T.Launch.Parameters)
    OS << " " << Name << "=" << Value;
  if (T.Launch.FirstCta)
    OS << "; the schedule runs the cluster of CTA " << *T.Launch.FirstCta;
  OS << '\n';
  if (!E.PtxPath.empty())
    OS << "  ptx " << E.PtxPath << '\n';
  if (!E.P)
    OS << "  no protocol: " << E.NoProtocol << '\n';
  if (!T.fromSolver())
    OS << "  a wait counts as stuck after " << T.TimeoutNs / 1000000 << " ms"
       << (T.Dropped ? "; " + std::to_string(T.Dropped) + " records dropped" : "") << '\n';
}

/// The schedule in runs of one role's consecutive steps, one line each: the order in which
/// the roles took turns, before every step of it.
/// The trace's atomic steps: `wsv verify`'s traces number them, a role's private
/// transitions carrying the number of the transition they are folded into; one per
/// transition elsewhere.
size_t atomicSteps(const Trace &T) {
  return !T.Steps.empty() && T.Steps.back().Step ? *T.Steps.back().Step + 1 : T.Steps.size();
}

void printRuns(const Explanation &E, llvm::raw_ostream &OS) {
  if (E.Runs.empty())
    return;
  size_t Atomic = atomicSteps(*E.T);
  OS << "\nruns (" << Atomic << " steps";
  if (Atomic != E.T->Steps.size())
    OS << " of " << E.T->Steps.size() << " transitions";
  OS << " in " << E.Runs.size() << " runs of one role)\n";
  for (const StepRun &R : E.Runs) {
    OS << llvm::format("  %3zu-%-4zu ", R.First, R.Last) << runLine(R);
    if (!R.Effects.empty())
      OS << "  -> " << R.Effects;
    OS << '\n';
  }
}

void printTimeline(const Explanation &E, llvm::raw_ostream &OS) {
  const Trace &T = *E.T;
  if (!T.fromSolver())
    return;
  bool Folded = atomicSteps(T) < T.Steps.size();
  OS << "\nschedule (";
  if (Folded)
    OS << atomicSteps(T) << " steps of ";
  OS << T.Steps.size() << (Folded ? " transitions" : " steps") << ")\n";
  // One column per role, so each role's own sequence reads down its column.
  for (size_t I = 0; I < T.Steps.size(); ++I) {
    const TraceStep &S = T.Steps[I];
    std::string What = S.Op;
    if (S.Barrier)
      What += " " + *S.Barrier + "[" + std::to_string(S.Index.value_or(0)) + "]";
    if (S.Parity)
      What += " parity " + std::to_string(*S.Parity);
    if (S.TxBytes)
      What += " " + std::to_string(*S.TxBytes) + " B";
    OS << llvm::format("  %3zu  ", Folded ? size_t(*S.Step) : I) << S.Role;
    if (S.Warp)
      OS << " (warp " << *S.Warp << ")";
    OS << ": " << What << "  # ptx " << S.PtxLine;
    if (!S.Source.empty())
      OS << ", " << S.Source;
    if (I < E.Effects.size() && !E.Effects[I].Note.empty())
      OS << "  -> " << E.Effects[I].Note;
    OS << '\n';
  }
}

void printStuck(const Explanation &E, llvm::raw_ostream &OS) {
  const Trace &T = *E.T;
  if (T.isRace()) {
    OS << "\n" << (T.Property.empty() ? "race" : T.Property + " broken") << "\n  "
       << (T.Reason.empty() ? "the trace does not say what went wrong" : T.Reason) << '\n';
    return;
  }
  OS << "\nstuck\n";
  if (E.Snap.Stuck.empty())
    OS << "  no warp is inside a wait\n";
  for (unsigned G = 0; G < E.Snap.Stuck.size(); ++G) {
    const analyzer::StuckWait &W = E.Snap.Stuck[G];
    OS << "  " << W.Role << (W.Warps.empty() ? "" : " (" + warpsText(W.Warps) + ")")
       << (W.Other.empty() ? " waits " : ": ") << waitText(W)
       << " at iteration " << W.FirstIteration;
    if (W.LastIteration != W.FirstIteration)
      OS << ".." << W.LastIteration;
    if (!T.fromSolver()) {
      OS << " in " << W.Ctas << " CTA" << (W.Ctas == 1 ? "" : "s");
      if (E.Groups[G].WaitedNs)
        OS << ", for " << E.Groups[G].WaitedNs / 1000000 << " ms";
    }
    OS << '\n';
    if (!E.P)
      continue;
    const analyzer::WaitMatch &M = E.WaitFor.Matches[G];
    if (!M.Waits.empty())
      OS << "    at " << waitLines(E, G) << '\n';
    if (!M.Check.empty())
      OS << "    " << M.Check << '\n';
  }
  OS << "  silent: ";
  if (E.Snap.Silent.empty())
    OS << "none";
  for (size_t I = 0; I < E.Snap.Silent.size(); ++I)
    OS << (I ? ", " : "") << E.Snap.Silent[I];
  OS << (E.Snap.Silent.empty()   ? ""
         : E.T->fromSolver()     ? " (finished)"
                                 : " (finished, or blocked where nothing is instrumented)")
     << '\n';
}

void printBarriers(const Explanation &E, llvm::raw_ostream &OS) {
  OS << "\nbarriers at the end\n";
  if (!E.HaveStates) {
    OS << "  " << E.NoStates << '\n';
    // What a blocked parity wait does tell: that phase has not completed.
    std::vector<std::string> Seen;
    for (const analyzer::StuckWait &W : E.Snap.Stuck) {
      if (W.Named || std::count(Seen.begin(), Seen.end(), waitText(W)))
        continue;
      Seen.push_back(waitText(W));
      std::string Waiters;
      for (const analyzer::StuckWait &V : E.Snap.Stuck)
        if (waitText(V) == waitText(W))
          Waiters += (Waiters.empty() ? "" : ", ") + V.Role;
      OS << "  " << W.Barrier << "[" << W.Slot << "]: its phase of parity " << W.Parity
         << " has not completed (current parity " << W.Parity << "; waited for by " << Waiters
         << ")\n";
    }
  }
  for (const BarrierEndState &B : E.States) {
    OS << "  " << B.Barrier << "[" << B.Slot << "]"
       << (B.InCta ? "@cta" + std::to_string(B.ClusterRank) : "") << ": ";
    if (!B.Initialized) {
      OS << "init count unknown (no init step, and no protocol to take it from)\n";
      continue;
    }
    OS << "phase " << B.CompletedPhases << " (parity " << (B.CompletedPhases & 1)
       << "), pending " << B.Pending;
    if (!B.FromTrace)
      OS << " of " << B.Expected;
    OS << ", tx " << B.TxCount;
    if (B.InFlight)
      OS << ", " << B.InFlight << " async operation(s) in flight";
    OS << (B.FromTrace ? " (as the trace states)" : "") << '\n';
    for (const std::string &V : B.Violations)
      OS << "    undefined: " << V << '\n';
  }
  if (!E.P)
    return;
  // What the protocol says each stuck barrier needs per phase.
  std::vector<std::string> Done;
  for (const analyzer::StuckWait &W : E.Snap.Stuck) {
    if (W.Named || std::count(Done.begin(), Done.end(), W.Barrier))
      continue;
    Done.push_back(W.Barrier);
    for (const analyzer::BarrierArray &B : E.P->Barriers) {
      if (B.Name != W.Barrier)
        continue;
      OS << "  " << B.Name << ": " << B.Slots << " slot" << (B.Slots == 1 ? "" : "s")
         << ", init "
         << (B.InitCounts.empty() ? "unknown" : analyzer::formatValue(*E.P, B.InitCounts[0]))
         << " arrival(s) per phase (protocol)\n";
    }
  }
}

void printEdges(const Explanation &E, llvm::raw_ostream &OS) {
  if (!E.P || E.T->isRace())
    return;
  const analyzer::Protocol &P = *E.P;
  OS << "\nwait-for\n";
  for (unsigned G = 0; G < E.Snap.Stuck.size(); ++G) {
    const analyzer::StuckWait &W = E.Snap.Stuck[G];
    if (!W.Other.empty()) { // no barrier: nothing to wait for
      OS << "  " << W.Role << ": " << W.Other << "\n";
      continue;
    }
    OS << "  " << W.Role << " waits " << waitText(W);
    std::vector<const analyzer::WaitEdge *> Edges;
    for (const analyzer::WaitEdge &Ed : E.WaitFor.Edges)
      if (Ed.From == G)
        Edges.push_back(&Ed);
    if (Edges.empty()) {
      OS << (W.Named ? "; no other role reaches that id\n"
                     : "; no role arrives on or completes " + W.Barrier + "[" +
                           std::to_string(W.Slot) + "]\n");
      continue;
    }
    OS << ";" << (Edges.size() == 1 && !W.Named ? " only" : "") << '\n';
    for (const analyzer::WaitEdge *Ed : Edges) {
      std::string Who = P.Roles[Ed->Role].Name;
      if (!Ed->TraceRole.empty() && Ed->TraceRole != Who)
        Who = Ed->TraceRole + " (protocol role " + Who + ")";
      OS << "    " << Who << (W.Named ? " also syncs on it (" : " completes it (")
         << completionsText(P, Ed->Completions) << ")";
      switch (Ed->State) {
      case analyzer::PeerState::Self:
        OS << ": the waiting role itself";
        break;
      case analyzer::PeerState::Stuck:
        for (unsigned H : Ed->To) {
          OS << "; " << E.Snap.Stuck[H].Role << " is stuck waiting "
             << waitText(E.Snap.Stuck[H]);
          if (!E.WaitFor.Matches[H].Waits.empty())
            OS << " (" << firstWaitLine(E, H) << ")";
        }
        if (Ed->CompletesAfterItsWait.value_or(false))
          OS << ", which comes before " << (W.Named ? "it reaches this barrier" : "those");
        break;
      case analyzer::PeerState::Silent:
        if (E.T->fromSolver())
          OS << "; " << Who << " is not blocked at the end: it has finished";
        else
          OS << "; " << Who << " is silent: finished, or blocked where nothing is instrumented";
        break;
      case analyzer::PeerState::Absent:
        OS << "; the trace names no role for it";
        break;
      }
      OS << '\n';
    }
  }
  if (!E.WaitFor.Cycle.empty()) {
    OS << "  cycle: ";
    for (unsigned G : E.WaitFor.Cycle)
      OS << E.Snap.Stuck[G].Role << " (" << waitText(E.Snap.Stuck[G]) << ") -> ";
    OS << E.Snap.Stuck[E.WaitFor.Cycle.front()].Role << '\n';
  } else {
    OS << "  no cycle among the stuck waits\n";
  }
}

void printDiagnosis(const Explanation &E, llvm::raw_ostream &OS) {
  if (!E.P)
    return;
  unsigned Contradicted = 0;
  for (const analyzer::WaitMatch &M : E.WaitFor.Matches)
    Contradicted += M.Contradicts;
  if (Contradicted)
    OS << "\nnote: at " << Contradicted << " stuck wait" << (Contradicted == 1 ? "" : "s")
       << " the captured slot or parity is not what this PTX's protocol gives at that "
          "iteration: is this the PTX that ran?\n";
  const analyzer::Diagnosis &D = E.WaitFor.Why;
  const char *Check = analyzer::checkName(D.Class);
  OS << "\ndiagnosis: " << (*Check ? Check : "unclassified") << '\n';
  for (const std::string &Fact : D.Evidence)
    OS << "  " << Fact << '\n';
  if (E.T->CertainAfter)
    OS << "  " << certainText(*E.T->CertainAfter) << '\n';
  OS << "fix: " << fixText(E) << '\n';
}

} // namespace

void printExplanation(const Explanation &E, llvm::raw_ostream &OS) {
  printHeader(E, OS);
  printRuns(E, OS);
  printTimeline(E, OS);
  printStuck(E, OS);
  printBarriers(E, OS);
  printEdges(E, OS);
  printDiagnosis(E, OS);
}

} // namespace report
} // namespace wsv
