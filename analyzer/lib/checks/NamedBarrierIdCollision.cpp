//===- NamedBarrierIdCollision.cpp - one barrier id, several groups of threads ----===//
//
// A named barrier counts arrivals, not who arrives: when two groups of threads that run at
// the same time (two writeback warpgroups) both use id a with count 128, a phase completes
// with any 128 of their threads, and one group can pass before its own threads got there
// (flashinfer 4533; vLLM's arrive vs sync). The same happens when groups pass different
// counts for one id. Uses are compared within one part of the kernel: the prologue and
// epilogue run before the roles split and after they join, so they cannot overlap with the
// roles, while all roles run at the same time.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void NamedBarrierIdCollision(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);
  NamedBarrierUses Uses = namedBarrierUses(P, Sites);
  unsigned Block = P.Launch.threads();

  std::map<std::pair<uint64_t, Part>, std::vector<const NamedBarrierUse *>> ById;
  for (const NamedBarrierUse &U : Uses.Uses)
    // Invalid counts are named-barrier-count's finding.
    if (U.Count && *U.Count && *U.Count % WarpSize == 0 && *U.Count <= Block)
      ById[{U.Id, U.Site->In}].push_back(&U);

  for (auto &[Key, List] : ById) {
    uint64_t Id = Key.first;
    llvm::BitVector All(Block);
    for (const NamedBarrierUse *U : List) {
      llvm::BitVector T = U->Threads;
      T.resize(Block);
      All |= T;
    }
    unsigned Come = All.count();
    std::string Bar = "barrier " + std::to_string(Id);

    // More threads use the id than any one use waits for: the groups share phases.
    const NamedBarrierUse *First = nullptr;
    for (const NamedBarrierUse *U : List)
      if (*U->Count < Come && (!First || U->Site->E->Where.PtxLine < First->Site->E->Where.PtxLine))
        First = U;
    bool Conditional = llvm::any_of(List, [](const NamedBarrierUse *U) { return U->Conditional; });
    if (First && Conditional) {
      // The threads are the most that may come; which of them do is not known.
      const Event &E = *First->Site->E;
      Ctx.report(Severity::Remark,
                 Bar + " is used by up to " + describeThreads(All) + " with count " +
                     std::to_string(*First->Count) +
                     ", but which of them run it depends on values that are not thread ids, "
                     "so whether groups share its phases was not decided",
                 E);
      continue;
    }
    if (First) {
      const Event &E = *First->Site->E;
      Finding &F = Ctx.report(
          Severity::Error,
          Bar + " is used by " + describeThreads(All) + " but " + E.Opcode + " " +
              std::to_string(Id) + ", " + std::to_string(*First->Count) +
              " completes a phase with any " + std::to_string(*First->Count) +
              " of them, so groups that run at the same time share its phases and one can pass "
              "before its own threads arrived",
          E);
      if (std::optional<SourceRef> From = operandSource(P, E, models::OperandRole::BarrierId))
        note(F, "the barrier id is computed here", *From);
      unsigned Noted = 0;
      for (const NamedBarrierUse *U : List)
        if (U != First && U->Site->E != &E && Noted++ < 3)
          note(F,
               describeThreads(U->Threads) + " use " + Bar + " here with count " +
                   std::to_string(*U->Count),
               U->Site->E->Where);
      continue;
    }

    // Different counts from different groups of threads.
    for (const NamedBarrierUse *A : List) {
      const NamedBarrierUse *Clash = nullptr;
      for (const NamedBarrierUse *B : List)
        if (*B->Count != *A->Count && B->Threads != A->Threads) {
          Clash = B;
          break;
        }
      if (!Clash || A->Conditional || Clash->Conditional)
        continue;
      const Event &E = *A->Site->E;
      Finding &F =
          Ctx.report(Severity::Error,
                     Bar + " is used with count " + std::to_string(*A->Count) + " by " +
                         describeThreads(A->Threads) + " and with count " +
                         std::to_string(*Clash->Count) + " by " + describeThreads(Clash->Threads) +
                         ", so the groups complete each other's phases at the wrong count",
                     E);
      note(F, "the use with count " + std::to_string(*Clash->Count), Clash->Site->E->Where);
      break;
    }
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
