//===- StageOrder.cpp - program order and stage slots for the race checks ---------===//
#include "StageOrder.h"

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

// Tile counts 1 to 8 of a 64-wide tile: enough to see a ring of up to 4 stages wrap twice,
// a peeled remainder both present and absent, and the one-tile edge case.
constexpr uint64_t ParamValues[] = {64, 128, 192, 256, 320, 448, 512};
// Iterations tried of an innermost loop (besides its last); outer loops try fewer.
constexpr uint64_t InnerIterations = 9;
constexpr uint64_t OuterIterations = 3;

bool containsLoop(const Step &S, unsigned Loop) {
  return std::find(S.Loops.begin(), S.Loops.end(), Loop) != S.Loops.end();
}

// The threads a set may hold: elected lanes stand for the warps they are elected from, and
// threads under a CTA-uniform condition count.
llvm::BitVector span(const ThreadSet &T) {
  llvm::BitVector Out = T.members();
  for (const ThreadSet::ElectedGroup &G : T.elected())
    if (!G.Excluded) {
      Out.resize(std::max(Out.size(), G.Candidates.size()));
      Out |= G.Candidates;
    }
  for (const ThreadSet::ConditionalGroup &G : T.conditional()) {
    Out.resize(std::max(Out.size(), G.Threads.size()));
    Out |= G.Threads;
  }
  return Out;
}

} // namespace

bool checks::coveredBy(const ThreadSet &Inner, const ThreadSet &Outer) {
  if (Inner.isUnknown() || Outer.isUnknown())
    return false;
  llvm::BitVector In = span(Inner);
  llvm::BitVector Out = Outer.members();
  Out.resize(std::max(In.size(), Out.size()));
  In.resize(Out.size());
  return !In.test(Out);
}

bool checks::overlaps(const ThreadSet &A, const ThreadSet &B) {
  if (A.isUnknown() || B.isUnknown())
    return true;
  llvm::BitVector X = span(A), Y = span(B);
  X.resize(std::max(X.size(), Y.size()));
  Y.resize(X.size());
  return X.anyCommon(Y);
}

bool checks::synchronizes(const Event &E, const ThreadSet &Threads) {
  if (E.Kind != EventKind::NamedBarrier || E.Detail == "arrive")
    return false;
  return coveredBy(Threads, E.Threads);
}

void checks::addNote(Finding &F, std::string Message, const Event &At) {
  F.Notes.push_back(FindingNote{std::move(Message), At.Where});
}

StageOrder::StageOrder(const Protocol &P) : P(P) {
  auto Build = [&](const Role *R) {
    Sequence S;
    S.R = R;
    llvm::SmallVector<unsigned, 3> Loops;
    flatten(P.Prologue, Loops, S, /*Prologue=*/true, /*Epilogue=*/false);
    if (R)
      flatten(R->Body, Loops, S, false, false);
    flatten(P.Epilogue, Loops, S, false, /*Epilogue=*/true);
    Seqs.push_back(std::move(S));
  };
  for (const Role &R : P.Roles)
    Build(&R);
  if (P.Roles.empty())
    Build(nullptr);
  learnBuffers();
}

void StageOrder::flatten(const std::vector<ProtocolItem> &Items,
                         llvm::SmallVector<unsigned, 3> &Loops, Sequence &Out, bool Prologue,
                         bool Epilogue) {
  for (const ProtocolItem &It : Items) {
    if (It.isEvent()) {
      Step S;
      S.Event = It.Index;
      S.Loops = Loops;
      S.InPrologue = Prologue;
      S.InEpilogue = Epilogue;
      Out.Steps.push_back(S);
      continue;
    }
    Loops.push_back(It.Index);
    flatten(P.Loops[It.Index].Body, Loops, Out, Prologue, Epilogue);
    Loops.pop_back();
  }
}

std::optional<uint64_t> StageOrder::leaf(const Expr *E, const Sample &S) const {
  switch (E->kind()) {
  case ExprKind::Constant:
    return E->payload();
  case ExprKind::IterationVar: {
    auto It = S.Iteration.find(static_cast<unsigned>(E->payload()));
    if (It == S.Iteration.end())
      return std::nullopt;
    return It->second;
  }
  case ExprKind::Param:
    return S.Param;
  case ExprKind::Symbol:
    // Buffers and descriptors are compared as offsets from the symbol they name.
    return 0;
  case ExprKind::SpecialReg: {
    const LaunchShape &L = P.Launch;
    switch (E->specialRegister()) {
    case SpecialRegister::TidX:
      return S.Thread;
    case SpecialRegister::LaneId:
      return S.Thread % WarpSize;
    case SpecialRegister::WarpId:
      return S.Thread / WarpSize;
    case SpecialRegister::NtidX:
      return L.BlockX;
    case SpecialRegister::NWarpId:
      return L.threads() / WarpSize;
    case SpecialRegister::ClusterNctaRank:
    case SpecialRegister::ClusterNctaidX:
      return L.ClusterSize;
    case SpecialRegister::NctaidX:
      // Two clusters' worth of CTAs: a persistent tile loop then strides over more than one
      // CTA (its trip count divides by the cluster count) and still runs several tiles.
      return 2 * L.ClusterSize;
    case SpecialRegister::NtidY:
    case SpecialRegister::NtidZ:
    case SpecialRegister::NctaidY:
    case SpecialRegister::NctaidZ:
    case SpecialRegister::NclusteridX:
    case SpecialRegister::NclusteridY:
    case SpecialRegister::NclusteridZ:
    case SpecialRegister::ClusterNctaidY:
    case SpecialRegister::ClusterNctaidZ:
      return 1;
    default:
      // CTA and cluster coordinates: the first CTA stands for all (stage slots do not
      // depend on where a CTA sits).
      return 0;
    }
  }
  default:
    return std::nullopt;
  }
}

std::optional<uint64_t> StageOrder::eval(const Expr *E, const Sample &S) const {
  if (!E)
    return std::nullopt;
  return ExprContext::evaluate(E, [&](const Expr *L) { return leaf(L, S); });
}

std::optional<bool> StageOrder::decide(const Expr *E, const Sample &S) const {
  if (std::optional<uint64_t> V = eval(E, S))
    return *V != 0;
  // A conjunction is false when one conjunct is, whatever the others (a peeked result next
  // to `k != 0`); a disjunction true when one disjunct is.
  if (E->width() == 1 && (E->is(ExprKind::And) || E->is(ExprKind::Or))) {
    bool IsAnd = E->is(ExprKind::And);
    bool AllKnown = true;
    for (const Expr *Op : E->ops()) {
      std::optional<bool> V = decide(Op, S);
      if (V && *V != IsAnd)
        return !IsAnd;
      AllKnown &= V.has_value();
    }
    if (AllKnown)
      return IsAnd;
  }
  return std::nullopt;
}

std::optional<bool> StageOrder::holds(const ProtocolValue &When, const Sample &S) const {
  if (When.absent())
    return true;
  if (!When.known())
    return std::nullopt;
  return decide(When.E, S);
}

std::optional<bool> StageOrder::runs(const Sequence &Seq, unsigned I, const Sample &S) const {
  const Step &St = Seq.Steps[I];
  if (Seq.R && !St.InPrologue && !St.InEpilogue) {
    std::optional<bool> H = holds(Seq.R->When, S);
    if (!H || !*H)
      return H;
  }
  for (unsigned L : St.Loops) {
    const ProtocolLoop &PL = P.Loops[L];
    std::optional<bool> H = holds(PL.When, S);
    if (!H || !*H)
      return H;
    auto It = S.Iteration.find(PL.Loop);
    if (It == S.Iteration.end() || !PL.Trip.known())
      return std::nullopt;
    std::optional<uint64_t> Trip = eval(PL.Trip.E, S);
    if (!Trip)
      return std::nullopt;
    if (It->second >= *Trip)
      return false;
  }
  return holds(P.Events[St.Event].When, S);
}

bool StageOrder::guessesIterations(const Sequence &Seq, unsigned I, const Sample &S) const {
  for (unsigned L : Seq.Steps[I].Loops) {
    const ProtocolLoop &PL = P.Loops[L];
    auto It = S.Iteration.find(PL.Loop);
    if (It == S.Iteration.end() || It->second == 0)
      continue;
    if (!PL.Trip.known() || !eval(PL.Trip.E, S))
      return true;
  }
  return false;
}

std::vector<Sample> StageOrder::samplesAt(const Sequence &Seq, unsigned I) const {
  const Step &St = Seq.Steps[I];
  const Event &E = P.Events[St.Event];
  Sample Base;
  llvm::BitVector Threads = span(E.Threads);
  int First = Threads.find_first();
  Base.Thread = First < 0 ? 0 : static_cast<unsigned>(First);
  std::vector<Sample> Out;
  for (uint64_t V : ParamValues) {
    Base.Param = V;
    std::vector<Sample> Partial{Base};
    for (size_t D = 0; D < St.Loops.size(); ++D) {
      const ProtocolLoop &PL = P.Loops[St.Loops[D]];
      bool Innermost = D + 1 == St.Loops.size();
      std::vector<Sample> Next;
      for (const Sample &S : Partial) {
        // Without a trip count, the first iterations stand for all (runs() then cannot
        // say whether they run, and the checks treat that as unknown).
        uint64_t Tries = Innermost ? InnerIterations : OuterIterations;
        uint64_t Trip = Tries;
        if (PL.Trip.known())
          if (std::optional<uint64_t> V = eval(PL.Trip.E, S))
            Trip = *V;
        uint64_t Limit = std::min(Trip, Tries);
        for (uint64_t K = 0; K < Limit; ++K) {
          Sample T = S;
          T.Iteration[PL.Loop] = K;
          Next.push_back(T);
        }
        if (Trip > Limit) {
          Sample T = S;
          T.Iteration[PL.Loop] = Trip - 1;
          Next.push_back(T);
        }
      }
      Partial = std::move(Next);
    }
    for (Sample &S : Partial)
      if (runs(Seq, I, S).value_or(true))
        Out.push_back(std::move(S));
  }
  return Out;
}

std::vector<Earlier> StageOrder::before(const Sequence &Seq, unsigned I) const {
  std::vector<Earlier> Out;
  for (unsigned J = I; J-- > 0;)
    Out.push_back(Earlier{J, NoIndex});
  const Step &St = Seq.Steps[I];
  for (size_t D = St.Loops.size(); D-- > 0;) {
    unsigned L = St.Loops[D];
    // Steps of inner loops around I were covered by the wrap of those loops.
    auto InInner = [&](const Step &J) {
      for (size_t E = D + 1; E < St.Loops.size(); ++E)
        if (containsLoop(J, St.Loops[E]))
          return true;
      return false;
    };
    unsigned End = I + 1;
    while (End < Seq.Steps.size() && containsLoop(Seq.Steps[End], L))
      ++End;
    for (unsigned J = End; J-- > I + 1;)
      if (!InInner(Seq.Steps[J]))
        Out.push_back(Earlier{J, L});
  }
  return Out;
}

std::optional<Sample> StageOrder::at(const Sequence &Seq, const Earlier &E, unsigned I,
                                     const Sample &S) const {
  const Step &From = Seq.Steps[I];
  const Step &To = Seq.Steps[E.Index];
  Sample T = S;
  for (unsigned L : To.Loops) {
    const ProtocolLoop &PL = P.Loops[L];
    if (L == E.Previous) {
      uint64_t &K = T.Iteration[PL.Loop];
      if (K < E.Distance)
        return std::nullopt;
      K -= E.Distance;
      continue;
    }
    if (containsLoop(From, L))
      continue;
    if (!PL.Trip.known())
      return std::nullopt;
    std::optional<uint64_t> Trip = eval(PL.Trip.E, T);
    if (!Trip || *Trip == 0)
      return std::nullopt;
    T.Iteration[PL.Loop] = *Trip - 1;
  }
  return T;
}

std::pair<unsigned, unsigned> StageOrder::body(const Sequence &Seq, unsigned Loop,
                                               unsigned I) const {
  unsigned Begin = I, End = I + 1;
  while (Begin > 0 && containsLoop(Seq.Steps[Begin - 1], Loop))
    --Begin;
  while (End < Seq.Steps.size() && containsLoop(Seq.Steps[End], Loop))
    ++End;
  return {Begin, End};
}

std::vector<unsigned> StageOrder::between(const Sequence &Seq, const Earlier &E,
                                          unsigned I) const {
  if (E.Previous == NoIndex) {
    std::vector<unsigned> Out;
    for (unsigned J = E.Index + 1; J < I; ++J)
      Out.push_back(J);
    return Out;
  }
  return between(Seq, E.Index, E.Previous, 1, I);
}

std::vector<unsigned> StageOrder::between(const Sequence &Seq, unsigned J, unsigned Loop,
                                          unsigned Distance, unsigned I) const {
  assert(Distance > 0 && "a step of the same iteration has no loop between");
  auto [Begin, End] = body(Seq, Loop, I);
  std::vector<unsigned> Out;
  for (unsigned K = J + 1; K < End; ++K)
    Out.push_back(K);
  for (unsigned D = 1; D < Distance; ++D)
    for (unsigned K = Begin; K < End; ++K)
      Out.push_back(K);
  for (unsigned K = Begin; K < I; ++K)
    Out.push_back(K);
  return Out;
}

std::optional<SlotRef> StageOrder::placeAt(unsigned B, uint64_t Offset, const Expr *Address,
                                           bool Resolved, const Sample &S) const {
  const Buffer &Buf = P.Buffers[B];
  if (!Resolved && !Buf.Symbol.empty() &&
      !Address->mentions([&](const Expr *L) {
        return L->is(ExprKind::Symbol) && L->name() == Buf.Symbol;
      }))
    return std::nullopt;
  std::optional<uint64_t> Base = eval(Buf.Base, S);
  if (!Base)
    return std::nullopt;
  int64_t D = static_cast<int64_t>(Offset) - static_cast<int64_t>(*Base) - Buf.Offset;
  if (D < 0)
    return std::nullopt;
  uint64_t U = static_cast<uint64_t>(D);
  if (Buf.Slots <= 1 || Buf.Stride == 0) {
    // One slot: its size bounds it, or, for the buffer the protocol placed the access in,
    // nothing does.
    if (Buf.SlotBytes ? U < *Buf.SlotBytes : Resolved)
      return SlotRef{B, 0};
    return std::nullopt;
  }
  if (U >= Buf.Stride * Buf.Slots)
    return std::nullopt;
  if (Buf.SlotBytes && U % Buf.Stride >= *Buf.SlotBytes)
    return std::nullopt;
  return SlotRef{B, U / Buf.Stride};
}

std::optional<SlotRef> StageOrder::place(const BufferRef &R, const Sample &S) const {
  // The whole address, evaluated for the sample's thread, is the truth: a slot form alone
  // can be off by the part of the address that moves with the thread (a consumer's half of
  // a tile).
  if (R.Address)
    if (std::optional<uint64_t> Offset = eval(R.Address, S)) {
      if (R.resolved())
        if (auto At = placeAt(R.Buffer, *Offset, R.Address, true, S))
          return At;
      for (unsigned B = 0; B < P.Buffers.size(); ++B)
        if (auto At = placeAt(B, *Offset, R.Address, false, S))
          return At;
    }
  if (!R.resolved())
    return std::nullopt;
  if (P.Buffers[R.Buffer].Slots <= 1)
    return SlotRef{R.Buffer, 0};
  if (!R.Slot.known())
    return std::nullopt;
  std::optional<uint64_t> V = eval(R.Slot.E, S);
  if (!V)
    return std::nullopt;
  return SlotRef{R.Buffer, *V};
}

std::optional<SlotRef> StageOrder::slot(const BarrierRef &R, const Sample &S) const {
  // A peer CTA's copy of the barrier (mapa) counts as the same slot: the CTAs of a cluster
  // run the same ring, and a stage multicast into both is released in both.
  if (!R.resolved() || !R.Slot.known())
    return std::nullopt;
  std::optional<uint64_t> V = eval(R.Slot.E, S);
  if (!V)
    return std::nullopt;
  return SlotRef{R.Array, *V};
}

void StageOrder::learnBuffers() {
  for (const Sequence &Seq : Seqs)
    for (unsigned I = 0; I < Seq.Steps.size(); ++I) {
      const Event &Load = event(Seq, I);
      if (Load.Kind != EventKind::AsyncLoad || !Load.Dst.resolved())
        continue;
      FilledBuffers.insert(Load.Dst.Buffer);
      std::vector<Earlier> Back = before(Seq, I);
      for (const Sample &S : samplesAt(Seq, I)) {
        std::optional<SlotRef> Dst = place(Load.Dst, S);
        std::optional<SlotRef> Full = slot(Load.Barrier, S);
        if (!Dst)
          continue;
        if (Full)
          Fills[*Dst].insert(*Full);
        // The nearest wait of the loading threads on another barrier is the one that
        // gives the slot back: the consumers' release.
        for (const Earlier &E : Back) {
          const Event &W = event(Seq, E.Index);
          if (W.Kind != EventKind::Wait || !W.Barrier.resolved() ||
              (Load.Barrier.resolved() && W.Barrier.Array == Load.Barrier.Array) ||
              !overlaps(W.Threads, Load.Threads))
            continue;
          std::optional<Sample> T = at(Seq, E, I, S);
          if (!T)
            break;
          if (std::optional<SlotRef> Empty = slot(W.Barrier, *T)) {
            Releases[*Dst].insert(*Empty);
            ReleaseArrays.insert(Empty->Array);
          }
          break;
        }
      }
    }
}

const std::set<SlotRef> &StageOrder::fillsOf(SlotRef BufferSlot) const {
  auto It = Fills.find(BufferSlot);
  return It == Fills.end() ? None : It->second;
}

const std::set<SlotRef> &StageOrder::releasesOf(SlotRef BufferSlot) const {
  auto It = Releases.find(BufferSlot);
  return It == Releases.end() ? None : It->second;
}

std::vector<SlotRef> StageOrder::releasedBy(SlotRef BarrierSlot) const {
  std::vector<SlotRef> Out;
  for (const auto &[Buf, Empties] : Releases)
    if (Empties.count(BarrierSlot))
      Out.push_back(Buf);
  return Out;
}

bool StageOrder::isFilled(unsigned Buffer) const { return FilledBuffers.count(Buffer) != 0; }

llvm::SmallVector<const BufferRef *, 2> StageOrder::reads(const Event &E) const {
  llvm::SmallVector<const BufferRef *, 2> Out;
  if (E.Kind == EventKind::Mma)
    for (const BufferRef &R : E.Reads)
      Out.push_back(&R);
  if (E.Kind == EventKind::SmemRead && E.Src.present())
    Out.push_back(&E.Src);
  return Out;
}

std::string StageOrder::name(const BufferRef &R) const {
  if (!R.resolved())
    return "shared memory at " + (R.Address ? P.exprString(R.Address) : std::string("?"));
  const Buffer &B = P.Buffers[R.Buffer];
  if (B.Slots <= 1 || !R.Slot.known())
    return B.Name;
  return B.Name + "[" + P.exprString(R.Slot.E) + "]";
}

std::string StageOrder::name(const BarrierRef &R) const {
  if (!R.resolved())
    return "an unresolved barrier";
  const BarrierArray &A = P.Barriers[R.Array];
  if (A.Slots <= 1 || !R.Slot.known())
    return A.Name;
  return A.Name + "[" + P.exprString(R.Slot.E) + "]";
}

std::string StageOrder::describe(const Sample &S, const Sequence &Seq, unsigned I) const {
  // The parameters that decide whether and how often the step runs: those its loops' trip
  // counts and conditions, its role's condition and its own condition mention.
  std::set<std::string> Params;
  auto Collect = [&](const Expr *E) {
    if (!E)
      return;
    E->mentions([&](const Expr *L) {
      if (L->is(ExprKind::Param))
        for (unsigned K = 0; K < P.ParamSymbols.size() && K < P.ParamNames.size(); ++K)
          if (P.ParamSymbols[K] == L->name())
            Params.insert(P.ParamNames[K]);
      return false;
    });
  };
  const Step &St = Seq.Steps[I];
  for (unsigned L : St.Loops) {
    Collect(P.Loops[L].Trip.E);
    Collect(P.Loops[L].When.E);
  }
  if (Seq.R && !St.InPrologue && !St.InEpilogue)
    Collect(Seq.R->When.E);
  Collect(P.Events[St.Event].When.E);

  std::string Out;
  llvm::raw_string_ostream OS(Out);
  const char *Sep = "";
  for (const auto &[Loop, K] : S.Iteration) {
    OS << Sep << P.loopVar(Loop) << " = " << K;
    Sep = ", ";
  }
  for (const std::string &Name : Params) {
    OS << Sep << Name << " = " << S.Param;
    Sep = ", ";
  }
  if (Out.empty())
    OS << "every size";
  return Out;
}

std::string StageOrder::who(const Sequence &Seq, unsigned I) const {
  const Step &St = Seq.Steps[I];
  if (St.InEpilogue)
    return "the epilogue";
  if (St.InPrologue)
    return "the prologue";
  return Seq.R ? "the " + Seq.R->Name : "the kernel";
}
