//===- ProtocolProbes.cpp - a try_wait that only decides whether to wait -----------===//
//
// Step 2b of the protocol builder (after the operands are resolved). The checked build of a kernel (and CUTLASS's
// `try_wait` then `wait` idiom) first tries the barrier once and takes a slow path (record
// what it waits for, then spin) only when that failed:
//
//     if (!mbarrier_try_wait_parity(bar, p)) { note(); while (!try_wait(bar, p)) timeout(); }
//
// The probe's result is an opaque value, so the slow path's Wait runs under a condition no
// instance can evaluate. When the Wait on the same barrier and parity is the very next event
// and runs only where the probe failed, taking the slow path always is the same protocol: a
// probe succeeds only when the phase has completed, and then the Wait, with nothing of this
// thread's in between, passes at once. So the probe's result reads as "failed" in the
// conditions of those waits, which then run unconditionally, and the probe stays a Probe
// (lowering drops it; lint counts the Wait). Anything else that reads the result keeps it
// opaque: a peek carried into a later iteration lets the barrier move on in between.
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

bool mentionsSite(const Expr *E, const void *Site) {
  return E && E->mentions([&](const Expr *Leaf) {
           return Leaf->is(ExprKind::Opaque) && Leaf->site() == Site;
         });
}

/// The opaque leaves of E read from the instruction at Site.
void leavesOf(const Expr *E, const void *Site, llvm::SmallVectorImpl<const Expr *> &Out) {
  if (!E)
    return;
  E->mentions([&](const Expr *Leaf) {
    if (Leaf->is(ExprKind::Opaque) && Leaf->site() == Site && !llvm::is_contained(Out, Leaf))
      Out.push_back(Leaf);
    return false;
  });
}

class ProbeFolder {
public:
  explicit ProbeFolder(BuildState &S) : S(S), Ctx(S.ctx()) {}

  void run() {
    for (unsigned I = 0; I < S.P.Events.size(); ++I)
      if (S.P.Events[I].Kind == EventKind::Probe)
        fold(I);
  }

private:
  /// Whether anything but the conditions of events reads the probe's result.
  bool readElsewhere(const void *Site) {
    for (unsigned I = 0; I < S.P.Events.size(); ++I) {
      const Event &E = S.P.Events[I];
      const EventInfo &In = S.Info[I];
      for (const ProtocolValue *V : {&E.Count, &E.TxBytes, &E.Parity, &E.Token, &E.Bytes,
                                     &E.WaitN, &E.Columns, &E.CtaMask, &E.Named.Id,
                                     &E.Named.Threads})
        if (mentionsSite(V->E, Site))
          return true;
      for (const Expr *A : {In.BarrierAddress, In.DstAddress, In.SrcAddress})
        if (mentionsSite(A, Site))
          return true;
    }
    const LoopInfo &Loops = S.FA.loops();
    for (const Loop &L : Loops.loops()) {
      // A spin loop is its wait; a loop that never returns is a hang report.
      if (S.SpinLoop[L.Index] || S.cfg().block(L.Header).NeverReturns ||
          !S.cfg().block(L.Header).Reachable)
        continue;
      const Expr *C = S.FA.guards().blockCondition(L.Header);
      if (mentionsSite(C ? S.values().closedForm(C) : nullptr, Site))
        return true;
    }
    return false;
  }

  /// Events that lowering drops and that order nothing the protocol models: fences and
  /// shared-memory accesses outside every buffer (a checked build's record of the wait).
  bool inert(unsigned I) const {
    const Event &E = S.P.Events[I];
    return E.Kind == EventKind::Fence ||
           (E.Kind == EventKind::SmemWrite && !E.Dst.resolved()) ||
           (E.Kind == EventKind::SmemRead && !E.Src.resolved());
  }

  bool readsResult(unsigned I, const void *Site) const {
    return llvm::any_of(S.Info[I].Uniform, [&](const Expr *C) { return mentionsSite(C, Site); });
  }

  void fold(unsigned ProbeIndex) {
    const Event &Probe = S.P.Events[ProbeIndex];
    if (!Probe.Parity.known() || !Probe.Barrier.resolved())
      return;
    const void *Site = &S.cfg().inst(Probe.Inst);
    // The waits that read the result: on the probe's barrier and phase, after it with only
    // inert events in between. Inert events may read it too (they keep their conditions).
    std::vector<unsigned> Waits;
    bool OnlyInert = true;
    for (unsigned I = 0; I < S.P.Events.size(); ++I) {
      if (I == ProbeIndex)
        continue;
      bool Between = I > ProbeIndex && OnlyInert;
      if (I > ProbeIndex && !inert(I))
        OnlyInert = false;
      if (!readsResult(I, Site) || inert(I))
        continue;
      const Event &W = S.P.Events[I];
      if (!Between || W.Kind != EventKind::Wait || W.Parity.E != Probe.Parity.E ||
          W.Barrier.Array != Probe.Barrier.Array || W.Barrier.Slot.E != Probe.Barrier.Slot.E ||
          W.Barrier.PeerRank.E != Probe.Barrier.PeerRank.E)
        return; // the fast path does something of its own, or the result is kept for later
      Waits.push_back(I);
      OnlyInert = true; // a second wait right after (both on the slow path) may follow
    }
    if (Waits.empty() || readElsewhere(Site))
      return;
    // Each wait must run only where the probe failed: some conjunct is false with the
    // result read as success, and none is false with it read as failure.
    std::vector<llvm::SmallVector<const Expr *, 4>> Folded;
    for (unsigned I : Waits) {
      bool OnlyOnFailure = false;
      llvm::SmallVector<const Expr *, 4> Kept;
      for (const Expr *C : S.Info[I].Uniform) {
        if (!mentionsSite(C, Site)) {
          Kept.push_back(C);
          continue;
        }
        const Expr *Failed = readAs(C, Site, false), *Passed = readAs(C, Site, true);
        if (!Failed || !Passed || !Failed->isConstant() || Failed->payload() == 0)
          return;
        if (Passed->isConstant() && Passed->payload() == 0)
          OnlyOnFailure = true;
      }
      if (!OnlyOnFailure)
        return;
      Folded.push_back(std::move(Kept));
    }
    for (unsigned K = 0; K < Waits.size(); ++K)
      S.Info[Waits[K]].Uniform = std::move(Folded[K]);
    S.P.Events[ProbeIndex].FastPath = true;
  }

  /// C with the probe's result (try_wait's only one: the predicate, 1 when the phase had
  /// completed) read as success or failure.
  const Expr *readAs(const Expr *C, const void *Site, bool Success) {
    llvm::SmallVector<const Expr *, 2> Leaves;
    leavesOf(C, Site, Leaves);
    const Expr *Out = C;
    for (const Expr *L : Leaves)
      Out = Ctx.substitute(Out, L, Ctx.constant(Success ? 1 : 0, L->width()));
    return Out;
  }

  BuildState &S;
  ExprContext &Ctx;
};

} // namespace

void wsv::analyzer::foldProbedWaits(BuildState &S) { ProbeFolder(S).run(); }
