//===- MbarrierTxBytes.cpp - expected transaction bytes against the bytes completed ---===//
//
// A phase completes only when its tx-count is back at zero (PTX ISA, mbarrier: "tx-count"):
// every expect_tx byte must be matched by a byte an async copy completes on the same phase.
// Expecting more than the copies bring leaves the phase open (the waiter hangs); expecting
// fewer completes it while copies are still landing (the waiter reads a partial tile, and
// the late bytes unbalance the next phase). Multicast copies complete in every destination
// CTA and 2-CTA copies on the barrier they name, which BarrierTraffic accounts for; tensor
// copies take their box size from the kernel's launch description, which PTX does not show.
//
//===----------------------------------------------------------------------------------===//
#include "Catalog.h"
#include "BarrierTraffic.h"

#include "wsv/analyzer/Checks.h"

#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

namespace {

struct PhaseEvents {
  const Event *Expect = nullptr;         ///< the first expect_tx of the phase
  std::vector<const Event *> Copies;     ///< copies completing bytes on it
  bool FromLaunch = false;               ///< a tensor box from the launch description
  bool Bound = false;                    ///< a byte count that is only an upper bound
};

PhaseEvents eventsOf(const Protocol &P, const SlotTraffic &S, size_t Phase) {
  PhaseEvents Out;
  for (const ArriverStream &A : S.Arrivers) {
    if (Phase >= A.Occurrences.size())
      continue;
    for (unsigned I : A.Occurrences[Phase].Events) {
      const Event &E = P.Events[I];
      if ((E.Kind == EventKind::ArriveExpectTx || E.Kind == EventKind::ExpectTx) && !Out.Expect)
        Out.Expect = &E;
      if (E.Kind == EventKind::AsyncLoad || E.Kind == EventKind::TryCancel ||
          E.Kind == EventKind::CompleteTx) {
        Out.Copies.push_back(&E);
        Out.FromLaunch |= E.BytesFrom == BytesOrigin::TensorBox;
        Out.Bound |= E.BytesFrom == BytesOrigin::AllocationBound;
      }
    }
  }
  return Out;
}

} // namespace

void wsv::analyzer::checks::MbarrierTxBytes(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  if (remarkIfUndecided(Ctx, F, "transaction bytes per phase"))
    return;
  std::set<unsigned> Done;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (Done.count(S.Array) || F.outranked(S.Array, Problem::TxBytes))
        continue;
      SlotPhases Ph = F.phases(S);
      std::optional<size_t> J = txMismatch(S, Ph);
      if (!J)
        continue;
      const SlotPhases::Phase &Phase = Ph.Phases[*J];
      PhaseEvents Ev = eventsOf(P, S, *J);
      std::string Name = slotName(P, S.Array, S.Slot, S.Cta);
      uint64_t Expect = Phase.ExpectBytes, Complete = Phase.CompleteBytes;
      if (Ev.Bound && Expect < Complete) {
        // The copies' bytes are only bounded by their destinations: fewer may be right.
        Ctx.report(Severity::Remark,
                   "expect_tx on " + Name + " is " + std::to_string(Expect) +
                       " B per phase; the copies completing on it write at most " +
                       std::to_string(Complete) +
                       " B (their box sizes are not known), so the bytes were not checked",
                   Ev.Expect ? *Ev.Expect : *Ev.Copies.front());
        Done.insert(S.Array);
        continue;
      }
      std::string Copies;
      for (const Event *E : Ev.Copies)
        if (std::optional<uint64_t> B = E->Bytes.constant())
          Copies += (Copies.empty() ? "" : " + ") + std::to_string(*B);
      bool FromPeers = llvm::any_of(S.Arrivers, [&](const ArriverStream &A) {
        return A.SourceCta != S.Cta && *J < A.Occurrences.size() &&
               A.Occurrences[*J].CompleteBytes;
      });
      std::string Msg;
      const Event *At = Ev.Expect;
      if (!Ev.Expect) {
        At = Ev.Copies.front();
        Msg = "async copies complete " + std::to_string(Complete) + " B per phase on " + Name +
              " but nothing expects them (no expect_tx), so the tx-count goes below zero "
              "and the phase completes before the copies land";
      } else {
        Msg = "expect_tx on " + Name + " is " + std::to_string(Expect) +
              " B per phase but the copies completing on it bring " + std::to_string(Complete) +
              " B" +
              (Copies.empty() ? ""
                              : " (" + Copies + (FromPeers ? " from this CTA and its peers" : "") +
                                    ")") +
              (Expect > Complete
                   ? ", so the tx-count never returns to zero and the phase never completes"
                   : ", so the phase completes while " + std::to_string(Complete - Expect) +
                         " B are still in flight and the waiter reads a partial stage");
      }
      Msg += " (for " + X.Values.describe(P) + ")";
      Finding &Fd = Ctx.report(Severity::Error, Msg, *At);
      for (const Event *E : Ev.Copies)
        Fd.Notes.push_back(
            {std::string(E->Multicast ? "multicast copy" : "copy") + " completing " +
                 (E->Bytes.constant() ? std::to_string(*E->Bytes.constant()) + " B" : "bytes") +
                 " on " + P.Barriers[S.Array].Name,
             E->Where});
      if (Ev.FromLaunch)
        Fd.Notes.push_back({"tensor copies take their box size from the tensor map, which PTX "
                            "does not show: these bytes are the boxes of the kernel's launch "
                            "description",
                            SourceRef()});
      Done.insert(S.Array);
    }
  }
  // expect_tx without any arrive: the pending count never reaches zero on its own.
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (Done.count(S.Array) || S.Waiters.empty() || !S.Unknown.empty() ||
          F.outranked(S.Array, Problem::TxBytes))
        continue;
      bool Expects = false, Arrives = false;
      const Event *At = nullptr;
      for (const ArriverStream &A : S.Arrivers)
        for (const Occurrence &O : A.Occurrences) {
          Arrives |= O.Arrivals != 0;
          if (O.ExpectBytes && !At) {
            Expects = true;
            At = &P.Events[O.FirstEvent];
          }
        }
      if (!Expects || Arrives)
        continue;
      Ctx.report(Severity::Error,
                 "expect_tx on " + slotName(P, S.Array, S.Slot, S.Cta) +
                     " is never paired with an arrive, so the pending count never reaches "
                     "zero and the phase never completes",
                 *At);
      Done.insert(S.Array);
    }
  }
}
