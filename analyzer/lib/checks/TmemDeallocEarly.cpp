//===- TmemDeallocEarly.cpp - TMEM freed before every use of it is over -----------===//
//
// tcgen05.dealloc returns columns that other warps may still read (tcgen05.ld of the
// writeback) or that MMAs may still write: the free must follow a barrier of the whole CTA
// that comes after every TMEM access of every role (Step 7's list: "dealloc after
// cta_sync"). Within the CTA a `bar.sync 0` or `barrier.cluster.wait` of all threads is
// that barrier; whether a cluster peer still uses the columns is cluster-exit-early's
// question.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void TmemDeallocEarly(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);

  auto Columns = [](const Event &E) {
    if (std::optional<uint64_t> N = E.Columns.constant())
      return std::to_string(*N) + " columns";
    return std::string("its columns");
  };
  auto Who = [](const EventSite &S) {
    return S.R ? S.R->Name : S.In == Part::Prologue ? std::string("the prologue")
                                                     : std::string("the epilogue");
  };

  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  for (const EventSite &D : Sites) {
    const Event &E = *D.E;
    if (E.Kind != EventKind::Dealloc || Seen[D.Index])
      continue;
    Seen[D.Index] = true;

    if (D.In == Part::Role) {
      // Inside a role nothing orders the free with other roles' accesses.
      const EventSite *Other = nullptr;
      for (const EventSite &U : Sites)
        if (U.In == Part::Role && U.R != D.R && usesTmem(*U.E)) {
          Other = &U;
          break;
        }
      if (Other) {
        Finding &F = Ctx.report(
            Severity::Error,
            E.Opcode + " frees " + Columns(E) + " inside role " + D.R->Name + " while role " +
                Other->R->Name + " may still access TMEM (" + Other->E->Opcode +
                "), with no CTA-wide barrier between them, so the accesses race with the free",
            E);
        note(F, "role " + Other->R->Name + " accesses TMEM here", Other->E->Where);
        continue;
      }
    }

    // The last TMEM access by other threads before the dealloc (the freeing warp's own
    // accesses are ordered by program order), and whether a CTA-wide barrier follows it.
    llvm::BitVector Freeing = possibleThreads(E.Threads);
    auto ByOthers = [&](const EventSite &U) {
      llvm::BitVector T = possibleThreads(U.E->Threads);
      T.resize(std::max(T.size(), Freeing.size()));
      llvm::BitVector F = Freeing;
      F.resize(T.size());
      T.reset(F);
      return U.E->Threads.isUnknown() || T.any();
    };
    const EventSite *LastUse = nullptr;
    for (const EventSite &U : Sites)
      if (U.Order < D.Order && usesTmem(*U.E) && ByOthers(U) &&
          (U.In != Part::Role || U.R == D.R || D.In != Part::Role) &&
          (!LastUse || U.Order > LastUse->Order))
        LastUse = &U;
    const EventSite *LaterUse = nullptr;
    if (D.In == Part::Prologue)
      for (const EventSite &U : Sites)
        if (U.Order > D.Order && usesTmem(*U.E)) {
          LaterUse = &U;
          break;
        }
    if (LaterUse) {
      Finding &F = Ctx.report(Severity::Error,
                              E.Opcode + " frees " + Columns(E) +
                                  " before the roles run, but " + Who(*LaterUse) +
                                  " accesses TMEM afterwards, so it uses freed columns",
                              E);
      note(F, Who(*LaterUse) + " accesses TMEM here", LaterUse->E->Where);
      continue;
    }
    if (!LastUse)
      continue;
    bool Synced = false;
    for (const EventSite &S : Sites)
      if (S.Order > LastUse->Order && S.Order < D.Order &&
          (S.In != Part::Role || S.R == D.R) && isCtaWideSync(P, *S.E))
        Synced = true;
    if (Synced)
      continue;
    Finding &F = Ctx.report(
        Severity::Error,
        E.Opcode + " frees " + Columns(E) +
            " with no barrier of the whole CTA after the last TMEM access (" +
            LastUse->E->Opcode + " by " + Who(*LastUse) + ", " + at(LastUse->E->Where) +
            "), so warps still reading or writing those columns race with the free",
        E);
    // Each role's last access, so the reader sees who may still be running.
    for (const Role &R : P.Roles) {
      const EventSite *Last = nullptr;
      for (const EventSite &U : Sites)
        if (U.R == &R && usesTmem(*U.E))
          Last = &U;
      if (Last)
        note(F, "role " + R.Name + " accesses TMEM here", Last->E->Where);
    }
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
