//===- ExplainRuns.cpp - a schedule as runs of one role's consecutive steps --------===//
//
// A counterexample of a few hundred steps reads as a dozen or two runs: which role moved, what
// it did (each operation once per barrier array, with the slots it reached and how often),
// over which loop iterations and PTX lines, and which phases it completed or whether it ended
// blocked. `wsv verify` orders its schedules so that a role's steps stand together where they
// commute (analyzer/lib/ExploreGather.cpp), which makes the runs few.
//
//===----------------------------------------------------------------------------------===//
#include "Explain.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace wsv {
namespace report {

namespace {

/// `0-3`, or `0,2` where the slots are not consecutive.
std::string slotsText(std::vector<unsigned> Slots) {
  std::sort(Slots.begin(), Slots.end());
  Slots.erase(std::unique(Slots.begin(), Slots.end()), Slots.end());
  if (Slots.size() > 2 && Slots.back() - Slots.front() + 1 == Slots.size())
    return std::to_string(Slots.front()) + "-" + std::to_string(Slots.back());
  std::string Out;
  for (unsigned V : Slots)
    Out += (Out.empty() ? "" : ",") + std::to_string(V);
  return Out;
}

/// An opcode without its state spaces, operand types and .sync.aligned
/// (`mbarrier.try_wait.parity`, `wgmma.mma_async.m64n128k16`), nearer the verbs of the
/// explorer's own steps (`wait`, `async-load`).
std::string shortOp(llvm::StringRef Op) {
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Op.split(Parts, '.');
  std::string Out;
  for (llvm::StringRef P : Parts) {
    llvm::StringRef Digits = P.drop_front(P.starts_with("bf") || P.starts_with("tf") ? 2 : 1);
    bool Type = P.size() >= 2 && P.size() <= 4 && llvm::StringRef("bsuft").contains(P[0]) &&
                !Digits.empty() && llvm::all_of(Digits, llvm::isDigit);
    // `::` marks state spaces and qualifiers (.shared::cta, .cta_group::1), except in the
    // verbs wait::ld and fence::before_thread_sync.
    bool Qualifier = P.contains("::") && !P.starts_with("wait::") && !P.starts_with("fence::");
    if (!Out.empty() && (Qualifier || P == "shared" || P == "global" || P == "sync" ||
                         P == "aligned" || Type))
      continue;
    Out += (Out.empty() ? "" : ".") + P.str();
  }
  return Out;
}

/// What steps [Begin, End) did: each operation once, with the barrier slots it reached and
/// how often (`wait mma2ld[0] parity 0, tcgen05.ld x4, arrive ld2mma[0]`).
std::string runText(const std::vector<TraceStep> &Steps, size_t Begin, size_t End) {
  struct Op {
    std::string Verb, Barrier, Parity;
    std::vector<unsigned> Slots;
    unsigned Times = 0;
  };
  std::vector<Op> Ops;
  for (size_t I = Begin; I < End; ++I) {
    const TraceStep &S = Steps[I];
    Op O{shortOp(llvm::StringRef(S.Op).split(' ').first), S.Barrier.value_or(""),
         S.Parity ? " parity " + std::to_string(*S.Parity) : "", {}, 0};
    auto It = std::find_if(Ops.begin(), Ops.end(), [&](const Op &X) {
      return X.Verb == O.Verb && X.Barrier == O.Barrier && X.Parity == O.Parity;
    });
    if (It == Ops.end())
      It = Ops.insert(Ops.end(), std::move(O));
    if (S.Barrier)
      It->Slots.push_back(S.Index.value_or(0));
    ++It->Times;
  }
  std::string Out;
  for (const Op &O : Ops) {
    Out += (Out.empty() ? "" : ", ") + O.Verb;
    if (!O.Barrier.empty())
      Out += " " + O.Barrier + "[" + slotsText(O.Slots) + "]";
    Out += O.Parity + (O.Times > 1 ? " x" + std::to_string(O.Times) : "");
  }
  return Out;
}

} // namespace

std::vector<StepRun> stepRuns(const std::vector<TraceStep> &Steps,
                              const std::vector<StepEffect> &Effects) {
  std::vector<StepRun> Runs;
  for (size_t Begin = 0, End = 0; Begin < Steps.size(); Begin = End) {
    for (End = Begin + 1; End < Steps.size() && Steps[End].Role == Steps[Begin].Role &&
                          Steps[End].Warp == Steps[Begin].Warp;
         ++End) {
    }
    StepRun R;
    R.First = Begin;
    R.Last = End - 1;
    R.Role = Steps[Begin].Role;
    if (Steps[Begin].Warp)
      R.Role += " (warp " + std::to_string(*Steps[Begin].Warp) + ")";
    R.What = runText(Steps, Begin, End);
    // Steps outside every loop (an epilogue's last wait) state no counters: the span is
    // that of the steps that do.
    for (size_t I = Begin; I < End; ++I)
      if (!Steps[I].Iterations.empty()) {
        if (R.FirstIterations.empty())
          R.FirstIterations = Steps[I].Iterations;
        R.LastIterations = Steps[I].Iterations;
      }
    R.LowLine = UINT32_MAX;
    for (size_t I = Begin; I < End; ++I)
      if (Steps[I].PtxLine) {
        R.LowLine = std::min(R.LowLine, Steps[I].PtxLine);
        R.HighLine = std::max(R.HighLine, Steps[I].PtxLine);
      }
    if (!R.HighLine)
      R.LowLine = 0;
    // The phases the run completed, what it did that is undefined, and whether it ended
    // blocked (the replay's notes).
    for (size_t I = Begin; I < End && I < Effects.size(); ++I) {
      llvm::StringRef Note = Effects[I].Note;
      if (Note.starts_with("completes") || Note.starts_with("undefined") ||
          (I + 1 == End && Note == "blocks"))
        R.Effects += (R.Effects.empty() ? "" : ", ") + Note.str();
    }
    Runs.push_back(std::move(R));
  }
  return Runs;
}

std::string certainText(uint64_t Step) {
  if (!Step)
    return "every schedule of this launch deadlocks: it hangs whatever the timing";
  return "certain after step " + std::to_string(Step) +
         ": until then some schedule lets every agent finish, so whether it hangs depends on "
         "the timing; from there none does";
}

std::string runLine(const StepRun &R) {
  std::string Out = R.Role;
  if (!R.FirstIterations.empty())
    Out += " [" + R.FirstIterations +
           (R.LastIterations != R.FirstIterations ? " .. " + R.LastIterations : "") + "]";
  Out += ": " + R.What;
  if (R.HighLine)
    Out += "  # ptx " + std::to_string(R.LowLine) +
           (R.HighLine > R.LowLine ? "-" + std::to_string(R.HighLine) : "");
  return Out;
}

} // namespace report
} // namespace wsv
