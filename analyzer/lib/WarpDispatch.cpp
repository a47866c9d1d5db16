//===- WarpDispatch.cpp - warp roles chosen through shared memory, made explicit ------===//
//
// WarpDispatch.h says what the idiom is. Why the value a worker reads is determined: barrier
// B is CTA-wide (no thread count) and only synchronizes (no bar.arrive, no bar.red), so its
// n-th completion needs every thread's n-th arrival. A store the default warps make after
// their s-th pass is ordered before a worker's load made after its a-th pass when s < a (the
// (s+1)-th completion waited for the store's thread), and after that load when s > a (the
// s-th completion waited for the worker, which loads before it arrives again). s == a would
// be a race, and is refused. So the load reads, byte by byte, the store with the greatest
// s < a. Counting passes needs B outside every loop but the dispatch loop itself, whose
// back edges are not followed: the first round is what the rewrite keeps, and the second
// round's pass count is the first's plus what a round passes (the same on every path).
// A store counts for a scenario only if some thread makes it whenever the scenario holds (its
// block's condition, with the scenario's branches decided, holds for some thread); a store
// made only under a condition on the launch that no scenario decides yet splits on the branch
// that tests it, so a store skipped on some launches is never taken as made.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/WarpDispatch.h"

#include "WarpDispatchResolver.h"

#include "wsv/analyzer/ExprPtx.h"
#include "wsv/models/SyncOp.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::dispatch;
using llvm::StringRef;
#include "wsv/ptx_parser/Printer.h"

std::optional<uint64_t> Resolver::leafAt(const Expr *E, unsigned Tid) const {
  if (E->kind() == ExprKind::SpecialReg) {
    switch (E->specialRegister()) {
    case SpecialRegister::TidX: return Tid;
    case SpecialRegister::TidY:
    case SpecialRegister::TidZ: return 0;
    case SpecialRegister::NtidX: return Shape.BlockX;
    case SpecialRegister::NtidY:
    case SpecialRegister::NtidZ: return 1;
    case SpecialRegister::LaneId: return Tid % 32;
    default: return std::nullopt;
    }
  }
  return std::nullopt;
}

bool wsv::analyzer::dispatch::isBarrierOp(const models::SyncOp &Op) {
  return Op.Kind == models::SyncKind::BarrierSync || Op.Kind == models::SyncKind::BarrierArrive ||
         Op.Kind == models::SyncKind::BarrierRed;
}

int64_t Resolver::passes(InstId I, unsigned Id) const {
  models::SyncDecodeResult R = models::decodeSyncOp(*FA->cfg().inst(I).I);
  return R && isBarrierOp(*R) && R->immediate(models::OperandRole::BarrierId) == int64_t(Id);
}

bool Resolver::passCounts(unsigned Id, LoopId L, const Scenario &S, std::vector<int64_t> &In,
                          std::vector<int64_t> &Count, std::string &Why) const {
  const Cfg &G = FA->cfg();
  const LoopInfo &Loops = FA->loops();
  Count.assign(G.size(), 0);
  for (InstId I = 0; I < G.instructions().size(); ++I) {
    models::SyncDecodeResult R = models::decodeSyncOp(*G.inst(I).I);
    if (!R || !isBarrierOp(*R))
      continue;
    std::optional<int64_t> BId = R->immediate(models::OperandRole::BarrierId);
    if (!BId) {
      Why = "the barrier id at ptx line " + std::to_string(line(I)) +
            " is in a register, so passes of barrier " + std::to_string(Id) +
            " cannot be counted";
      return false;
    }
    if (uint64_t(*BId) != Id)
      continue;
    if (R->Kind != models::SyncKind::BarrierSync || R->threadCount()) {
      Why = "barrier " + std::to_string(Id) + " is also used at ptx line " +
            std::to_string(line(I)) + " as an arrive, a reduction or with a thread count";
      return false;
    }
    BlockId B = G.inst(I).Block;
    LoopId Inner = Loops.loopFor(B);
    if (Inner != NoIndex && Inner != L) {
      Why = "barrier " + std::to_string(Id) + " is passed inside a loop at ptx line " +
            std::to_string(line(I)) + ", so the passes before a store are not one number";
      return false;
    }
    ++Count[B];
  }
  In.assign(G.size(), Unset);
  In[G.entry()] = 0;
  for (BlockId B : G.reversePostOrder()) {
    int64_t V = B == G.entry() ? 0 : Unset;
    for (BlockId P : G.block(B).Preds) {
      if (Loops.isBackEdge(P, B) || In[P] == Unset || cut(S, P, B))
        continue;
      int64_t Out = In[P] == Conflict ? Conflict : In[P] + Count[P];
      V = V == Unset ? Out : V == Out ? V : Conflict;
    }
    In[B] = V;
  }
  return true;
}

BlockId Resolver::follow(InstId Ld, const Expr *LoadLeaf, LoopId L, unsigned W, uint64_t V,
                         bool &Left) const {
  const Cfg &G = FA->cfg();
  const ValueAnalysis &Vals = FA->values();
  const Loop &Lp = FA->loops().loop(L);
  auto Plain = [](const ptx::Instruction &I) {
    static const StringRef Ok[] = {"setp", "selp", "mov", "cvt", "and", "or", "xor", "not",
                                   "add",  "sub",  "shl", "shr", "bra", "brx"};
    return llvm::is_contained(Ok, I.baseName());
  };
  auto Leaf = [&](const Expr *E) -> std::optional<uint64_t> {
    if (E == LoadLeaf)
      return V;
    return leafAt(E, 32 * W);
  };
  BlockId B = G.inst(Ld).Block;
  Left = false;
  for (unsigned Steps = 0; Steps < 64; ++Steps) {
    if (!Lp.contains(B)) {
      Left = true;
      return B;
    }
    InstId From = B == G.inst(Ld).Block ? Ld + 1 : G.block(B).Begin;
    for (InstId I = From; I < G.block(B).End; ++I)
      if (!Plain(*G.inst(I).I))
        return B;
    BlockId Next = NoIndex;
    for (BlockId S : G.block(B).Succs) {
      const Expr *C = Vals.edgeCondition(B, S);
      std::optional<uint64_t> Taken = C ? ExprContext::evaluate(C, Leaf) : std::nullopt;
      if (!Taken)
        return NoIndex;
      if (*Taken) {
        if (Next != NoIndex && Next != S)
          return NoIndex;
        Next = S;
      }
    }
    if (Next == NoIndex)
      return NoIndex;
    if (Next == Lp.Header)
      return NoIndex; // a state that only waits for the next round
    B = Next;
  }
  return NoIndex;
}

std::string Resolver::registerType(InstId I, StringRef Name) const {
  for (const ptx::Scope *S = FA->cfg().inst(I).Scope; S; S = S->parent())
    for (const ptx::Statement *St : S->body()) {
      const auto *D = llvm::dyn_cast<ptx::RegisterDecl>(St);
      if (!D)
        continue;
      for (const ptx::RegisterName &N : D->names()) {
        StringRef Base = N.Name.str();
        unsigned Index = 0;
        if (N.isRange() ? Name.starts_with(Base) &&
                              !Name.drop_front(Base.size()).getAsInteger(10, Index) &&
                              Index < N.Count
                        : Name == Base)
          return D->type().ltrim('.').str();
      }
    }
  return "";
}

const Expr *Resolver::sharedSymbol(const Expr *E) {
  const Expr *Symbol = nullptr;
  bool Other = E->mentions([&](const Expr *L) {
    if (L->kind() != ExprKind::Symbol)
      return false;
    if (L->symbolSpace() != SymbolSpace::Shared && L->symbolSpace() != SymbolSpace::Generic)
      return true;
    if (!Symbol)
      Symbol = L;
    return Symbol != L;
  });
  return Other ? nullptr : Symbol;
}

std::optional<uint64_t> Resolver::constantOffset(const Expr *E, const Expr *Symbol) {
  if (E->mentions([&](const Expr *L) { return L->kind() == ExprKind::Symbol && L != Symbol; }))
    return std::nullopt;
  return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
    if (Leaf == Symbol)
      return 0;
    return std::nullopt;
  });
}

bool Resolver::resolve(InstId Ld, LoopId L) {
  const Cfg &G = FA->cfg();
  const ValueAnalysis &V = FA->values();
  const LoopInfo &Loops = FA->loops();
  const Loop &Lp = Loops.loop(L);
  const BasicBlock &H = G.block(Lp.Header);
  Dispatch D;
  D.Ld = Ld;
  D.L = L;

  // The barrier the header passes before the load: the round's fence.
  D.Id = NoIndex;
  for (InstId I = H.Begin; I < Ld; ++I) {
    models::SyncDecodeResult R = models::decodeSyncOp(*G.inst(I).I);
    if (!R || !isBarrierOp(*R))
      continue;
    std::optional<int64_t> BId = R->immediate(models::OperandRole::BarrierId);
    if (!BId)
      return fail(Ld, "the barrier before it has its id in a register");
    if (D.Id != NoIndex && uint64_t(*BId) != D.Id)
      return fail(Ld, "the loop header passes two different barriers before it");
    D.Id = unsigned(*BId);
    ++D.Before;
  }
  if (D.Id == NoIndex)
    return fail(Ld, "no barrier orders it after the stores of the state");
  if (Shape.BlockY != 1 || Shape.BlockZ != 1 || Shape.BlockX % 32)
    return fail(Ld, "the block is not one-dimensional in whole warps");

  // The byte each warp reads: Symbol + f(warp id) + constant.
  const Expr *Addr = V.operand(Ld, 1);
  D.Symbol = Addr ? sharedSymbol(Addr) : nullptr;
  if (!D.Symbol)
    return fail(Ld, "its address is not a shared variable plus a function of the warp");
  auto At = [&](const Expr *E, unsigned Tid) {
    return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
      if (Leaf == D.Symbol)
        return 0;
      return leafAt(Leaf, Tid);
    });
  };
  unsigned Warps = Shape.BlockX / 32;
  // Warps that enter the loop: the header's condition on its entry edges.
  const Expr *Enter = FA->guards().blockCondition(Lp.Header);
  D.Offset.assign(Warps, -1);
  for (unsigned W = 0; W < Warps; ++W) {
    std::optional<uint64_t> E0 = Enter ? At(Enter, 32 * W) : std::nullopt;
    std::optional<uint64_t> E1 = Enter ? At(Enter, 32 * W + 31) : std::nullopt;
    if (E0 && E1 && !*E0 && !*E1)
      continue;
    std::optional<uint64_t> A0 = At(Addr, 32 * W), A1 = At(Addr, 32 * W + 31);
    if (!A0 || !A1 || *A0 != *A1)
      return fail(Ld, "the byte warp " + std::to_string(W) + " reads does not follow from its "
                      "warp id alone");
    D.Offset[W] = int64_t(*A0);
  }
  if (llvm::all_of(D.Offset, [](int64_t O) { return O < 0; }))
    return fail(Ld, "no warp enters the loop around it");
  for (int64_t O : D.Offset)
    if (O >= 0) {
      D.Lo = std::min(D.Lo, O);
      D.Hi = std::max(D.Hi, O + 1);
    }

  // Branches on the launch outside every loop: where the default warps' passes differ by
  // path, the side each takes is what the workers' reads depend on.
  for (BlockId B : G.reversePostOrder()) {
    const BasicBlock &BB = G.block(B);
    if (BB.Terminator != TerminatorKind::CondBranch || BB.Succs.size() != 2 ||
        BB.Succs[0] == BB.Succs[1] || Loops.loopFor(B) != NoIndex)
      continue;
    const Expr *C = literal(B, 0);
    if (C && isLaunchValue(C) && !C->isConstant())
      Branches.push_back(B);
  }

  // What the partitions read from shared memory at a fixed place: the values the default
  // warps stored there for them (Triton passes a partition's captured values that way).
  for (BlockId B = 0; B < G.size(); ++B) {
    if (!Lp.contains(B) || B == Lp.Header || !G.block(B).Reachable)
      continue;
    for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I) {
      const CfgInst &CI = G.inst(I);
      if (CI.Frame != 0 || CI.I->baseName() != "ld" || CI.I->guard())
        continue;
      Access A = accessOf(*CI.I);
      if (!A.Shared || A.Elements != 1 || A.Bytes < 2)
        continue;
      const Expr *CA = V.operand(I, 1);
      std::optional<uint64_t> Off = CA ? constantOffset(CA, D.Symbol) : std::nullopt;
      if (!Off)
        continue;
      D.Captures.push_back({I, int64_t(*Off), int64_t(A.Bytes), false, ""});
    }
  }

  // The stores that may write the state bytes or the captured values.
  for (InstId I = 0; I < G.instructions().size(); ++I) {
    const ptx::Instruction &In0 = *G.inst(I).I;
    if (!G.block(G.inst(I).Block).Reachable)
      continue;
    StringRef Base = In0.baseName();
    if (Base != "st" && Base != "atom" && Base != "red")
      continue;
    Access A = accessOf(In0);
    if (!A.Shared || !A.Bytes)
      continue;
    const Expr *SA = V.operand(I, Base == "st" ? 0 : 1);
    std::optional<uint64_t> Off = SA ? constantOffset(SA, D.Symbol) : std::nullopt;
    if (!Off)
      continue; // not at a constant place of the variable: the note's assumption
    int64_t Begin = int64_t(*Off), Size = A.Bytes * A.Elements;
    bool InLoop = Loops.loopFor(G.inst(I).Block) != NoIndex &&
                  Loops.isNestedIn(Loops.loopFor(G.inst(I).Block), L);
    unsigned StoreLine = line(I);
    if (Begin + Size > D.Lo && Begin < D.Hi) {
      if (Base != "st" || G.inst(I).I->guard())
        return fail(Ld, "the state bytes are also written at ptx line " +
                        std::to_string(StoreLine) +
                        " by an atomic, a reduction or a predicated store");
      if (InLoop)
        return fail(Ld, "the state bytes are written inside the loop that reads them (ptx line " +
                        std::to_string(StoreLine) + ")");
      Store S{I, Begin, Size, false, {}, nullptr};
      for (unsigned E = 0; E < A.Elements; ++E) {
        const Expr *Val = V.operand(I, 1, E);
        if (!Val || !Val->isConstant())
          return fail(Ld, "the store at ptx line " + std::to_string(StoreLine) +
                          " writes a value that is not a constant");
        for (unsigned K = 0; K < A.Bytes; ++K)
          S.Bytes.push_back(uint8_t(Val->payload() >> (8 * K)));
      }
      D.Stores.push_back(std::move(S));
    }
    for (Capture &C : D.Captures) {
      if (Begin + Size <= C.Offset || Begin >= C.Offset + C.Size)
        continue;
      C.Stored = true;
      const Expr *Val = A.Elements == 1 ? V.operand(I, 1) : nullptr;
      if (Base != "st" || G.inst(I).I->guard() || InLoop || !Val || !isLaunchValue(Val)) {
        C.Why = "the store at ptx line " + std::to_string(StoreLine) +
                (InLoop ? " is made inside the loop that reads it"
                        : " is not a plain store of a value of the launch");
        continue;
      }
      if (llvm::none_of(D.Stores, [&](const Store &St) { return St.I == I && St.Capture; }))
        D.Stores.push_back({I, Begin, Size, true, {}, Val});
    }
  }
  // Loads of places no st writes (the TMEM address tcgen05.alloc writes) stay loads.
  llvm::erase_if(D.Captures, [](const Capture &C) { return !C.Stored; });

  // The load's value in the rewritten program, and where each round leads.
  const Expr *Dest = V.operand(Ld, 0);
  if (Dest)
    Dest->mentions([&](const Expr *E) {
      if (E->kind() == ExprKind::Load && !D.LoadLeaf)
        D.LoadLeaf = E;
      return false;
    });
  if (!D.LoadLeaf)
    return fail(Ld, "its value is not a load the analysis tracks");

  // Each scenario (a side of some branches on the launch) that gives every count one value.
  std::vector<Scenario> Leaves;
  std::vector<Reading> Readings;
  std::vector<Scenario> Work{Scenario()};
  while (!Work.empty()) {
    Scenario S = Work.back();
    Work.pop_back();
    Reading R;
    BlockId Split = NoIndex;
    std::string Why;
    switch (analyze(S, D, R, Split, Why)) {
    case Verdict::Fail: return fail(Ld, Why);
    case Verdict::Split:
      if (S.Sides.size() >= MaxSides)
        return fail(Ld, Why + ", on more than " + std::to_string(MaxSides) +
                            " branches on the launch");
      for (unsigned Side : {1u, 0u}) {
        Scenario T = S;
        T.Sides.push_back({Split, Side});
        Work.push_back(T);
      }
      continue;
    case Verdict::Ok:
      Leaves.push_back(S);
      Readings.push_back(std::move(R));
    }
  }
  BlockId Exit = NoIndex;
  for (const Reading &R : Readings) {
    if (R.Exit != NoIndex && Exit != NoIndex && R.Exit != Exit)
      return fail(Ld, "the warps leave the loop for different places");
    if (R.Exit != NoIndex)
      Exit = R.Exit;
  }
  if (Exit == NoIndex)
    return fail(Ld, "no warp reaches it");
  return rewrite(D, Leaves, Readings, Exit);
}

void Resolver::run() {
  // Cheap test first: an 8-bit shared load and a barrier, or nothing to look at.
  bool Byte = false, Barrier = false;
  std::function<void(const ptx::Scope &)> Scan = [&](const ptx::Scope &Sc) {
    for (const ptx::Statement *St : Sc.body()) {
      if (const auto *Sub = llvm::dyn_cast<ptx::Scope>(St)) {
        Scan(*Sub);
        continue;
      }
      const auto *I = llvm::dyn_cast<ptx::Instruction>(St);
      if (!I)
        continue;
      if (I->baseName() == "ld") {
        Access A = accessOf(*I);
        Byte |= A.Shared && A.Bytes == 1 && A.Elements == 1;
      }
      Barrier |= I->baseName() == "barrier" || I->baseName() == "bar";
    }
  };
  if (!F.body())
    return;
  Scan(*F.body());
  if (!Byte || !Barrier)
    return;
  std::optional<LaunchShape> LS = LaunchShape::fromFunction(F);
  if (!LS)
    return;
  Shape = *LS;
  AnalysisOptions AO;
  AO.UseSolver = false;
  FA = std::make_unique<FunctionAnalysis>(M, F, AO);
  const Cfg &G = FA->cfg();
  for (InstId I = 0; I < G.instructions().size(); ++I) {
    const CfgInst &CI = G.inst(I);
    if (CI.Frame != 0 || CI.I->baseName() != "ld" || CI.I->guard())
      continue;
    Access A = accessOf(*CI.I);
    if (!A.Shared || A.Bytes != 1 || A.Elements != 1)
      continue;
    LoopId L = FA->loops().loopWithHeader(CI.Block);
    if (L == NoIndex)
      continue;
    // A load in a loop header right after a barrier: the worker side of a dispatch.
    bool AfterBarrier = false;
    for (InstId J = G.block(CI.Block).Begin; J < I; ++J) {
      models::SyncDecodeResult R = models::decodeSyncOp(*G.inst(J).I);
      AfterBarrier |= R && isBarrierOp(*R);
    }
    if (!AfterBarrier)
      continue;
    resolve(I, L);
    return; // one dispatch per kernel
  }
}


WarpDispatchResult wsv::analyzer::resolveWarpDispatch(const ptx::Module &M) {
  WarpDispatchResult Out;
  std::vector<Edit> Edits;
  unsigned Serial = 0;
  for (const ptx::Function *F : M.functions()) {
    if (!F->isDefinition() || !F->isEntry())
      continue;
    std::vector<std::string> Notes;
    size_t Before = Edits.size();
    Resolver(M, *F, Edits, Notes, Serial).run();
    Serial += Edits.size() != Before;
    if (!Notes.empty())
      Out.Notes[F->name().str()] = std::move(Notes);
  }
  if (Edits.empty())
    return Out;
  std::sort(Edits.begin(), Edits.end(),
            [](const Edit &A, const Edit &B) { return A.Offset > B.Offset; });
  Out.Text = M.source().str();
  for (const Edit &E : Edits)
    Out.Text.replace(E.Offset, E.Length, E.Text);
  return Out;
}

bool wsv::analyzer::applyWarpDispatch(ptx::ParseResult &Parsed, KernelNotes &Notes) {
  if (!Parsed.ok())
    return false;
  WarpDispatchResult R = resolveWarpDispatch(*Parsed.M);
  if (R.Text.empty()) {
    for (auto &[Kernel, N] : R.Notes)
      Notes[Kernel] = std::move(N);
    return false;
  }
  std::string Name = Parsed.M->bufferName().str();
  ptx::ParseResult Again = ptx::parseString(R.Text, Name, [](const ptx::Diagnostic &) {});
  if (!Again.ok()) {
    // Not expected: the edits are PTX the parser reads. Keep the module as it was.
    for (auto &[Kernel, N] : R.Notes)
      Notes[Kernel].push_back("warp roles chosen by a shared-memory byte not resolved: the "
                              "rewritten text did not parse");
    return false;
  }
  for (auto &[Kernel, N] : R.Notes)
    Notes[Kernel] = std::move(N);
  Parsed = std::move(Again);
  return true;
}
