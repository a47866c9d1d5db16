//===- MbarrierInitialPhase.cpp - both sides of a pipeline start at the same parity ---===//
//
// A fresh mbarrier is in phase 0 with nothing completed, so try_wait.parity 1 passes at once
// and try_wait.parity 0 waits for the first completion (PTX ISA, mbarrier.try_wait). In a
// pipeline of two barriers the side that releases buffers (the producer on empty) must start
// at parity 1 and the side that consumes them at parity 0. When the two roles that complete
// each other's barriers start at the same parity, either both wait for a completion only the
// other can make (deadlock at the first stage), or both pass at once (the consumer reads a
// stage that was never filled).
//
//===----------------------------------------------------------------------------------===//
#include "Catalog.h"
#include "BarrierTraffic.h"

#include "wsv/analyzer/Checks.h"

#include <algorithm>
#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

namespace {

/// Which side of a pair is the release side: the barrier that carries no data (no tx bytes)
/// before one completed by commits, before one completed by async copies.
unsigned dataRank(const ArrayUse &U) { return U.TxTraffic ? 2 : U.Commits ? 1 : 0; }

} // namespace

void wsv::analyzer::checks::MbarrierInitialPhase(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  if (remarkIfUndecided(Ctx, F, "initial phases"))
    return;
  // One finding per pair of roles: a role whose data wait starts at the wrong parity also
  // pairs with the other role's release barriers, and the pair to show is the one whose
  // waits come first in the roles' programs (a consumer's first wait is on its data).
  std::map<std::pair<unsigned, unsigned>, PhasePair> Best;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const PhasePair &Pp : samePhasePairs(P, X, F.PhaseSkipOwners)) {
      if (F.outranked(Pp.ArrayA, Problem::InitialPhase) ||
          F.outranked(Pp.ArrayB, Problem::InitialPhase))
        continue;
      auto [It, New] = Best.try_emplace({Pp.RoleA, Pp.RoleB}, Pp);
      if (!New && std::max(Pp.SeqA, Pp.SeqB) < std::max(It->second.SeqA, It->second.SeqB))
        It->second = Pp;
    }
  }
  for (const auto &[Roles, Pp] : Best) {
    bool AIsRelease = dataRank(F.Uses[Pp.ArrayA]) <= dataRank(F.Uses[Pp.ArrayB]);
    unsigned Role = AIsRelease ? Pp.RoleA : Pp.RoleB;
    unsigned Other = AIsRelease ? Pp.RoleB : Pp.RoleA;
    unsigned Array = AIsRelease ? Pp.ArrayA : Pp.ArrayB;
    unsigned OtherArray = AIsRelease ? Pp.ArrayB : Pp.ArrayA;
    const Event &At = P.Events[AIsRelease ? Pp.EventA : Pp.EventB];
    const Event &OtherWait = P.Events[AIsRelease ? Pp.EventB : Pp.EventA];
    std::string R = ownerName(P, Role), O = ownerName(P, Other);
    std::string Msg =
        R + "'s first wait on " + P.Barriers[Array].Name + " is for parity " +
        std::to_string(Pp.Parity) + ", the same as " + O + "'s first wait on " +
        P.Barriers[OtherArray].Name + ", and each completes the other's barrier";
    if (Pp.Parity == 0)
      Msg += ": nothing completes a phase of either before the other arrives, so both "
             "wait forever (" + R + " must start at parity 1)";
    else
      Msg += ": both waits pass on the fresh barriers at once, so " + O +
             " uses a stage before " + R + " filled it (" + O + " must start at parity 0)";
    Finding &Fd = Ctx.report(Severity::Error, Msg, At);
    Fd.Notes.push_back({O + "'s first wait, parity " + std::to_string(Pp.Parity),
                        OtherWait.Where});
  }
}
