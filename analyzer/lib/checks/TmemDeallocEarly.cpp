//===- TmemDeallocEarly.cpp - TMEM freed before every use of it is over -----------===//
//
// tcgen05.dealloc returns columns that other warps may still read (tcgen05.ld of the
// writeback) or that MMAs may still write: the free must follow a barrier of the whole CTA
// that comes after every TMEM access of every role (Step 7's list: "dealloc after
// cta_sync"). Within the CTA a `bar.sync 0` or `barrier.cluster.wait` of all threads is
// that barrier (`barrier.sync 0` without .aligned counts when every thread reaches one,
// wherever); whether a cluster peer still uses the columns is cluster-exit-early's question.
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
    return S.R                      ? S.R->Name
           : S.In == Part::Prologue ? std::string("the prologue")
                                    : std::string("the epilogue");
  };

  // Whether a thread running site A reaches site B later: B follows A in the same sequence,
  // or B's part comes after A's (prologue, then roles, then epilogue).
  auto Later = [](const EventSite &A, const EventSite &B) {
    if (A.In == B.In)
      return A.R == B.R && B.Order > A.Order;
    return static_cast<int>(B.In) > static_cast<int>(A.In);
  };
  // U is ordered before D when one CTA-wide barrier instruction comes after U for U's
  // threads and before D for the freeing warp.
  std::vector<std::optional<uint64_t>> Keys = ctaBarrierKeys(P, Sites);
  auto Ordered = [&](const EventSite &U, const EventSite &D) {
    for (size_t I = 0; I < Sites.size(); ++I) {
      if (!Keys[I] || !Later(U, Sites[I]))
        continue;
      for (size_t J = 0; J < Sites.size(); ++J)
        if (Keys[J] == Keys[I] && Later(Sites[J], D))
          return true;
    }
    return false;
  };

  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  for (const EventSite &D : Sites) {
    const Event &E = *D.E;
    if (E.Kind != EventKind::Dealloc || Seen[D.Index])
      continue;
    Seen[D.Index] = true;

    // TMEM accesses of other threads (the freeing warp's own are in program order) that no
    // CTA-wide barrier separates from the free.
    llvm::BitVector Freeing = possibleThreads(E.Threads);
    auto ByOthers = [&](const EventSite &U) {
      llvm::BitVector T = possibleThreads(U.E->Threads);
      T.resize(std::max(T.size(), Freeing.size()));
      llvm::BitVector F = Freeing;
      F.resize(T.size());
      T.reset(F);
      return U.E->Threads.isUnknown() || T.any();
    };
    // The one named in the message: a thread's own tcgen05.ld/st before an MMA, whose
    // accesses the hardware finishes later; then the last in program order.
    const EventSite *Unordered = nullptr;
    auto Rank = [](const EventSite &U) { return U.E->Kind == EventKind::Mma ? 0 : 1; };
    for (const EventSite &U : Sites)
      if (usesTmem(*U.E) && ByOthers(U) && !Ordered(U, D) &&
          (!Unordered || Rank(U) > Rank(*Unordered) ||
           (Rank(U) == Rank(*Unordered) && U.Order > Unordered->Order)))
        Unordered = &U;
    if (!Unordered)
      continue;
    bool After = Later(D, *Unordered);
    Finding &F = Ctx.report(
        Severity::Error,
        E.Opcode + " frees " + Columns(E) +
            (After ? " before " : " with no barrier of the whole CTA after ") +
            Unordered->E->Opcode + " by " + Who(*Unordered) + " (" + at(Unordered->E->Where) + ")" +
            (After ? ", which then uses freed columns"
                   : ", so threads still reading or writing those columns race with the free"),
        E);
    // The last such access of each role, so the reader sees who may still be running.
    for (const Role &R : P.Roles) {
      const EventSite *Last = nullptr;
      for (const EventSite &U : Sites)
        if (U.R == &R && usesTmem(*U.E) && ByOthers(U) && !Ordered(U, D))
          Last = &U;
      if (Last)
        note(F, Who(*Last) + " accesses TMEM here", Last->E->Where);
    }
    if (!Unordered->R)
      note(F, Who(*Unordered) + " accesses TMEM here", Unordered->E->Where);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
