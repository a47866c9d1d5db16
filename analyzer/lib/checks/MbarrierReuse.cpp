//===- MbarrierReuse.cpp - barrier memory reused while the barrier is still valid --===//
//
// An mbarrier object lives until mbarrier.inval: its memory may be used for anything else,
// another mbarrier.init included, only after the inval, and the inval only after every
// thread and async operation is done with it (PTX ISA, "mbarrier.inval", "mbarrier.init").
// Two shapes break that:
//  - an init that runs while others use the barrier: inside a role (a persistent kernel that
//    "resets" a barrier per tile while the other role still arrives or waits on it), or
//    after its use without an inval. The reset drops pending arrivals and restarts the phase
//    at 0, so parity waits pass on the wrong phase or never pass;
//  - a plain store or copy into the barrier's bytes after it was initialized, with no inval
//    in between (barrier memory reused as staging).
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include "wsv/analyzer/FunctionAnalysis.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {
bool isUseOfBarrier(const Event &E) {
  return E.Barrier.resolved() && E.Kind != EventKind::Init && E.Kind != EventKind::Inval;
}

std::string barrierName(const Protocol &P, const Event &E) {
  const BarrierArray &A = P.Barriers[E.Barrier.Array];
  if (A.Slots == 1 || !E.Barrier.Slot.known())
    return A.Name;
  return A.Name + "[" + P.exprString(E.Barrier.Slot.E) + "]";
}

std::string who(const EventSite &S) {
  return S.R                      ? "role " + S.R->Name
         : S.In == Part::Prologue ? std::string("the prologue")
                                  : std::string("the epilogue");
}

} // namespace

namespace wsv {
namespace analyzer {
namespace checks {

void MbarrierReuse(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);

  auto InvalBetween = [&](unsigned Array, unsigned From, unsigned To) {
    for (const EventSite &S : Sites)
      if (S.E->Kind == EventKind::Inval && S.E->Barrier.Array == Array && S.Order > From &&
          S.Order < To)
        return true;
    return false;
  };

  // Re-initialization while the barrier is in use.
  for (const EventSite &S : Sites) {
    const Event &E = *S.E;
    if (E.Kind != EventKind::Init || !E.Barrier.resolved())
      continue;
    if (S.In == Part::Prologue && S.Loops.empty())
      continue; // the setup before anyone uses it
    unsigned A = E.Barrier.Array;
    // Only a second init is a re-initialization: the first one moved into a role is
    // mbarrier-init-visibility's finding.
    bool InitializedBefore = !S.Loops.empty();
    auto SameSlot = [&](const Event &Other) {
      std::optional<uint64_t> Mine = E.Barrier.Slot.constant(),
                              Theirs = Other.Barrier.Slot.constant();
      return !Mine || !Theirs || *Mine == *Theirs;
    };
    for (const EventSite &I : Sites)
      InitializedBefore |= I.E->Kind == EventKind::Init && I.E->Barrier.Array == A &&
                           I.Order < S.Order && SameSlot(*I.E);
    if (!InitializedBefore)
      continue;
    const EventSite *Other = nullptr;  // a use by other threads that runs at the same time
    const EventSite *Before = nullptr; // a use earlier in program order
    for (const EventSite &U : Sites) {
      if (!isUseOfBarrier(*U.E) || U.E->Barrier.Array != A)
        continue;
      if (S.In == Part::Role && U.In == Part::Role && U.R != S.R && !Other)
        Other = &U;
      if (U.Order < S.Order && !Before)
        Before = &U;
    }
    if (Other) {
      // An inval earlier in the same role means the memory was handed over on purpose; so
      // does one later in a loop around the init, when that loop holds every init of the
      // barrier: it runs before the init of the next iteration (a persistent kernel that
      // initializes a tile's barriers at its start and invalidates them at its end).
      auto InvalLoopsBack = [&](const EventSite &I) {
        for (const ProtocolLoop *L : S.Loops) {
          if (!llvm::is_contained(I.Loops, L))
            continue;
          bool AllInits = true;
          for (const EventSite &J : Sites)
            AllInits &= J.E->Kind != EventKind::Init || J.E->Barrier.Array != A ||
                        !SameSlot(*J.E) || llvm::is_contained(J.Loops, L);
          if (AllInits)
            return true;
        }
        return false;
      };
      bool Handed = false;
      for (const EventSite &I : Sites)
        Handed |= I.E->Kind == EventKind::Inval && I.E->Barrier.Array == A && I.R == S.R &&
                  (I.Order < S.Order || (!I.E->When.known() && InvalLoopsBack(I)));
      if (Handed)
        continue;
      Finding &F = Ctx.report(
          Severity::Error,
          "mbarrier.init re-initializes " + barrierName(P, E) + " inside " + who(S) +
              (S.Loops.empty() ? std::string() : "'s loop") + " while " + who(*Other) +
              " still uses it (" + Other->E->Opcode + ", " + at(Other->E->Where) +
              "); the init resets its phase to 0 and drops pending arrivals, so parity waits "
              "pass on the wrong phase or never pass",
          E);
      note(F, who(*Other) + " uses " + barrierName(P, *Other->E) + " here", Other->E->Where);
      for (unsigned I : P.Barriers[A].InitEvents)
        if (I != S.Index) {
          note(F, "it was initialized here first", P.Events[I].Where);
          break;
        }
      continue;
    }
    if (Before && !InvalBetween(A, Before->Order, S.Order)) {
      Finding &F =
          Ctx.report(Severity::Warning,
                     "mbarrier.init initializes " + barrierName(P, E) + " again after " +
                         who(*Before) + " used it (" + at(Before->E->Where) +
                         ") with no mbarrier.inval in between, which the PTX ISA leaves undefined",
                     E);
      note(F, "earlier use", Before->E->Where);
    }
  }

  // Plain writes into a barrier's bytes after its init, without an inval.
  for (const EventSite &S : Sites) {
    const Event &E = *S.E;
    if (E.Kind != EventKind::SmemWrite && E.Kind != EventKind::AsyncLoad &&
        E.Kind != EventKind::AsyncCopy)
      continue;
    for (unsigned A = 0; A < P.Barriers.size(); ++A) {
      const BarrierArray &Array = P.Barriers[A];
      std::optional<int64_t> Off = P.offsetIntoBarrier(A, E.Dst.Address);
      if (!Off || *Off < 0 || uint64_t(*Off) >= Array.Slots * Array.Stride)
        continue;
      const EventSite *Init = nullptr;
      for (const EventSite &I : Sites)
        if (I.E->Kind == EventKind::Init && I.E->Barrier.Array == A && I.Order < S.Order && !Init)
          Init = &I;
      if (!Init || InvalBetween(A, Init->Order, S.Order))
        continue;
      Finding &F = Ctx.report(
          Severity::Error,
          E.Opcode + " writes into the memory of mbarrier " + Array.Name + " (byte " +
              std::to_string(*Off) +
              ") while it is still a valid barrier (no mbarrier.inval since its init); the "
              "PTX ISA leaves reusing that memory undefined, and a late arrival or a later "
              "mbarrier operation mixes barrier state with the data",
          E);
      note(F, "the barrier is initialized here", Init->E->Where);
      break;
    }
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
