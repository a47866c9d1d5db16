//===- ClusterMulticastMask.cpp - a ctaMask bit or mapa rank outside the cluster --===//
//
// Multicast copies and commits name their target CTAs in a ctaMask (bit i: the CTA of rank
// i in the cluster), and mapa turns an address into the one at the same offset in the CTA of
// a given rank (PTX ISA, "cp.async.bulk.tensor", "tcgen05.commit", "mapa"). A bit or rank at
// or above the cluster size names no CTA: the bytes or the arrival go nowhere (undefined
// behaviour), and whoever waits for them hangs (CUTLASS 3658). Ranks that depend on the CTA's
// own rank are checked for every rank of the cluster; anything else is asked of the solver.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include "wsv/analyzer/FunctionAnalysis.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {
std::string binary(uint64_t V) {
  std::string S;
  do {
    S.insert(S.begin(), char('0' + (V & 1)));
    V >>= 1;
  } while (V);
  return "0b" + S;
}

/// Values of E for every rank of the cluster and every thread of the event, when E depends
/// on nothing else; std::nullopt otherwise.
std::optional<std::vector<uint64_t>> valuesPerRank(const Protocol &P, const Expr *E,
                                                   const Event &Ev, unsigned ClusterSize) {
  std::vector<uint64_t> Out;
  llvm::BitVector Threads = possibleThreads(Ev.Threads);
  unsigned Block = P.Launch.threads();
  unsigned X = P.Launch.BlockX ? P.Launch.BlockX : 1;
  for (unsigned Rank = 0; Rank < ClusterSize; ++Rank) {
    // Thread-dependent parts: the first thread of the event stands for the others when
    // the value does not depend on the thread; otherwise every thread is evaluated.
    for (unsigned T = 0; T < Block && T < Threads.size(); ++T) {
      if (!Threads.test(T))
        continue;
      std::optional<uint64_t> V =
          ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
            if (Leaf->isConstant())
              return Leaf->payload();
            if (!Leaf->is(ExprKind::SpecialReg))
              return std::nullopt;
            switch (Leaf->specialRegister()) {
            case SpecialRegister::ClusterCtaRank:
              return Rank;
            case SpecialRegister::ClusterNctaRank:
              return ClusterSize;
            case SpecialRegister::TidX:
              return T % X;
            case SpecialRegister::LaneId:
              return T % WarpSize;
            case SpecialRegister::NtidX:
              return P.Launch.BlockX;
            default:
              return std::nullopt;
            }
          });
      if (!V)
        return std::nullopt;
      Out.push_back(*V);
    }
  }
  return Out;
}
} // namespace

namespace wsv {
namespace analyzer {
namespace checks {

void ClusterMulticastMask(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  ClusterShape Cluster = clusterShape(P);
  std::string Size = std::to_string(Cluster.Size) + "-CTA cluster (" + Cluster.From + ")";
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  // Errors wait here so that instructions with the same fact (an unrolled ring of multicast
  // copies) give one finding.
  struct Error {
    const Event *At;
    std::string Fact, Consequence;
    std::optional<SourceRef> ValueFrom;
  };
  std::vector<Error> Pending;

  for (const EventSite &S : eventSites(P)) {
    const Event &E = *S.E;
    if (Seen[S.Index])
      continue;
    Seen[S.Index] = true;

    // A multicast mask.
    if (E.Multicast || !E.CtaMask.absent()) {
      if (!Cluster.Known) {
        Ctx.report(Severity::Remark,
                   E.Opcode + " multicasts to a ctaMask, but the cluster size is not stated "
                              "(.reqnctapercluster or a launch description), so the mask was "
                              "not checked",
                   E);
      } else if (!E.CtaMask.known()) {
        Ctx.report(
            Severity::Remark,
            E.Opcode + " multicasts with a ctaMask wsv could not resolve" +
                (E.CtaMask.Unknown.empty() ? std::string() : " (" + E.CtaMask.Unknown + ")") +
                ", so its CTAs were not checked against the " + Size,
            E);
      } else if (std::optional<std::vector<uint64_t>> Masks =
                     valuesPerRank(P, E.CtaMask.E, E, Cluster.Size)) {
        uint64_t Outside = 0, Shown = 0;
        for (uint64_t M : *Masks)
          if (M >> Cluster.Size) {
            Outside |= M >> Cluster.Size << Cluster.Size;
            Shown = M;
          }
        if (Outside) {
          std::string Ranks;
          for (unsigned B = Cluster.Size; B < 64; ++B)
            if (Outside >> B & 1)
              Ranks += (Ranks.empty() ? "" : ", ") + std::to_string(B);
          bool Plural = llvm::StringRef(Ranks).contains(',');
          Pending.push_back({&E,
                             E.Opcode + " multicasts to ctaMask " + binary(Shown) + ", whose " +
                                 (Plural ? "bits " : "bit ") + Ranks +
                                 (Plural ? " name" : " names") + " no CTA of the " + Size,
                             ", so the bytes or arrivals for them go nowhere (undefined "
                             "behaviour) and whoever waits for them hangs",
                             operandSource(P, E, models::OperandRole::CtaMask)});
        }
      } else if (Solver *Z = Ctx.solver()) {
        ExprContext &C = P.Analysis->context();
        const Expr *Mask = E.CtaMask.E;
        const Expr *High = C.lshr(Mask, C.constant(Cluster.Size, Mask->width()));
        SolverResult R = Z->isSatisfiable(C.ne(High, C.constant(0, Mask->width())));
        if (R.Answer == SolverAnswer::Yes)
          Ctx.report(Severity::Warning,
                     E.Opcode + " multicasts to ctaMask " + P.exprString(Mask) +
                         ", which for some values has bits at or above the " + Size +
                         " size, so those copies or arrivals would go nowhere",
                     E);
        else if (R.Answer == SolverAnswer::Unknown)
          Ctx.report(Severity::Remark,
                     E.Opcode + " multicasts to ctaMask " + P.exprString(Mask) +
                         " and the solver could not decide whether it stays inside the " + Size +
                         " (" + R.Reason + ")",
                     E);
      } else {
        Ctx.report(Severity::Remark,
                   E.Opcode + " multicasts to ctaMask " + P.exprString(E.CtaMask.E) +
                       ", which depends on more than the CTA's rank and no solver was given, "
                       "so it was not checked",
                   E);
      }
    }

    // A peer CTA's barrier, from mapa.
    const ProtocolValue &Rank = E.Barrier.PeerRank;
    if (Rank.absent())
      continue;
    if (!Cluster.Known) {
      Ctx.report(Severity::Remark,
                 E.Opcode + " reaches a barrier of another CTA (mapa), but the cluster size is "
                            "not stated, so the rank was not checked",
                 E);
      continue;
    }
    if (!Rank.known()) {
      Ctx.report(Severity::Remark,
                 E.Opcode + " reaches a barrier of a CTA whose rank wsv could not resolve (" +
                     Rank.Unknown + "), so it was not checked against the " + Size,
                 E);
      continue;
    }
    if (std::optional<std::vector<uint64_t>> Ranks = valuesPerRank(P, Rank.E, E, Cluster.Size)) {
      for (uint64_t V : *Ranks)
        if (V >= Cluster.Size) {
          Pending.push_back({&E,
                             E.Opcode + " reaches the barrier of CTA rank " + std::to_string(V) +
                                 " through mapa, outside the " + Size,
                             ", so the arrival goes to no CTA (undefined behaviour) and the "
                             "barrier it was meant for never completes",
                             std::nullopt});
          break;
        }
      continue;
    }
    if (Solver *Z = Ctx.solver()) {
      ExprContext &C = P.Analysis->context();
      SolverResult R = Z->isSatisfiable(C.uge(Rank.E, C.constant(Cluster.Size, Rank.E->width())));
      if (R.Answer == SolverAnswer::Yes)
        Ctx.report(Severity::Warning,
                   E.Opcode + " reaches CTA rank " + P.exprString(Rank.E) +
                       " through mapa, which for some values is outside the " + Size,
                   E);
      else if (R.Answer == SolverAnswer::Unknown)
        Ctx.report(Severity::Remark,
                   E.Opcode + " reaches CTA rank " + P.exprString(Rank.E) +
                       " and the solver could not decide whether it stays inside the " + Size +
                       " (" + R.Reason + ")",
                   E);
      continue;
    }
    Ctx.report(Severity::Remark,
               E.Opcode + " reaches CTA rank " + P.exprString(Rank.E) +
                   ", which depends on more than the CTA's rank and no solver was given, so "
                   "it was not checked",
               E);
  }

  std::vector<bool> Done(Pending.size(), false);
  for (size_t I = 0; I < Pending.size(); ++I) {
    if (Done[I])
      continue;
    unsigned Same = 0;
    const Event *Last = nullptr;
    for (size_t J = I + 1; J < Pending.size(); ++J)
      if (!Done[J] && Pending[J].Fact == Pending[I].Fact) {
        Done[J] = true;
        ++Same;
        Last = Pending[J].At;
      }
    std::string More = Same ? " (as do " + std::to_string(Same) + " more like it)" : "";
    Finding &F = Ctx.report(Severity::Error, Pending[I].Fact + More + Pending[I].Consequence,
                            *Pending[I].At);
    if (Pending[I].ValueFrom)
      note(F, "the mask is set here", *Pending[I].ValueFrom);
    if (Last)
      note(F, "the last instruction like it", Last->Where);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
