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
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/WarpDispatch.h"

#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/ThreadSet.h"
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

namespace {

constexpr int64_t Conflict = -1, Unset = -2;

/// A text edit of the module's source: Length bytes at Offset become Text.
struct Edit {
  size_t Offset, Length;
  std::string Text;
};

/// The bytes of a type modifier (`b8` 1, `u32` 4, `v2` is not one).
std::optional<unsigned> typeBytes(StringRef Mod) {
  if (Mod.size() < 2 || !StringRef("bsuf").contains(Mod[0]))
    return std::nullopt;
  unsigned Bits = 0;
  if (Mod.drop_front().getAsInteger(10, Bits) || Bits % 8 || Bits == 0 || Bits > 64)
    return std::nullopt;
  return Bits / 8;
}

/// Shape of a load or store: bytes per element and elements (`.v2`, `.v4`).
struct Access {
  unsigned Bytes = 0, Elements = 1;
  bool Shared = false;
};

Access accessOf(const ptx::Instruction &I) {
  Access A;
  for (StringRef M : I.modifiers()) {
    if (M == "shared" || M.starts_with("shared::"))
      A.Shared = true;
    else if (M == "v2" || M == "v4" || M == "v8")
      A.Elements = M.back() == '2' ? 2 : M.back() == '4' ? 4 : 8;
    else if (auto B = typeBytes(M))
      A.Bytes = *B;
  }
  return A;
}

class Resolver {
public:
  Resolver(const ptx::Module &M, const ptx::Function &F, std::vector<Edit> &Edits,
           std::vector<std::string> &Notes, unsigned Serial)
      : M(M), F(F), Edits(Edits), Notes(Notes), Serial(Serial) {}

  /// Looks for the dispatch in F; rewrites it (into Edits) where it can.
  void run();

private:
  const ptx::Module &M;
  const ptx::Function &F;
  std::vector<Edit> &Edits;
  std::vector<std::string> &Notes;
  unsigned Serial;
  std::unique_ptr<FunctionAnalysis> FA;
  LaunchShape Shape;

  unsigned line(InstId I) const { return FA->cfg().location(I).Line; }
  bool fail(InstId Ld, const std::string &Why) {
    Notes.push_back("warp roles chosen by a shared-memory byte (ld.shared at ptx line " +
                    std::to_string(line(Ld)) + ") not resolved: " + Why +
                    "; what those warps do stays undecided");
    return false;
  }
  bool resolve(InstId Ld, LoopId L);
  /// Passes of barrier Id before each block (Unset: not reached, Conflict: differs by path),
  /// without the back edges of loop L; false when Id occurs in another loop.
  bool passCounts(unsigned Id, LoopId L, std::vector<int64_t> &In, std::vector<int64_t> &Count,
                  std::string &Why) const;
  /// Where a worker of warp W with state V goes from the load: the first block that does
  /// more than compute and branch, or the first block outside L. NoIndex: undecided.
  BlockId follow(InstId Ld, const Expr *LoadLeaf, LoopId L, unsigned W, uint64_t V,
                 bool &Left) const;
  std::optional<uint64_t> leafAt(const Expr *E, unsigned Tid) const;
  std::string registerType(InstId I, StringRef Name) const;
  /// 1 when instruction I passes barrier Id, else 0.
  int64_t passes(InstId I, unsigned Id) const;
  /// Whether block B reaches To by falling through, or by its branch.
  bool fallsInto(BlockId B, BlockId To) const {
    const BasicBlock &BB = FA->cfg().block(B);
    return BB.Terminator == TerminatorKind::FallThrough ||
           (BB.Terminator == TerminatorKind::CondBranch && BB.Succs.size() > 1 &&
            BB.Succs[1] == To);
  }
  bool jumpsTo(BlockId B, BlockId To) const {
    const BasicBlock &BB = FA->cfg().block(B);
    return (BB.Terminator == TerminatorKind::Branch ||
            BB.Terminator == TerminatorKind::CondBranch) &&
           BB.Succs[0] == To;
  }
};

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

static bool isBarrierOp(const models::SyncOp &Op) {
  return Op.Kind == models::SyncKind::BarrierSync || Op.Kind == models::SyncKind::BarrierArrive ||
         Op.Kind == models::SyncKind::BarrierRed;
}

int64_t Resolver::passes(InstId I, unsigned Id) const {
  models::SyncDecodeResult R = models::decodeSyncOp(*FA->cfg().inst(I).I);
  return R && isBarrierOp(*R) && R->immediate(models::OperandRole::BarrierId) == int64_t(Id);
}

bool Resolver::passCounts(unsigned Id, LoopId L, std::vector<int64_t> &In,
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
      if (Loops.isBackEdge(P, B) || In[P] == Unset)
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

bool Resolver::resolve(InstId Ld, LoopId L) {
  const Cfg &G = FA->cfg();
  const ValueAnalysis &V = FA->values();
  const LoopInfo &Loops = FA->loops();
  const Loop &Lp = Loops.loop(L);
  const BasicBlock &H = G.block(Lp.Header);

  // The barrier the header passes before the load: the round's fence.
  unsigned Id = NoIndex, Before = 0;
  for (InstId I = H.Begin; I < Ld; ++I) {
    models::SyncDecodeResult R = models::decodeSyncOp(*G.inst(I).I);
    if (!R || !isBarrierOp(*R))
      continue;
    std::optional<int64_t> BId = R->immediate(models::OperandRole::BarrierId);
    if (!BId)
      return fail(Ld, "the barrier before it has its id in a register");
    if (Id != NoIndex && uint64_t(*BId) != Id)
      return fail(Ld, "the loop header passes two different barriers before it");
    Id = unsigned(*BId);
    ++Before;
  }
  if (Id == NoIndex)
    return fail(Ld, "no barrier orders it after the stores of the state");
  if (Shape.BlockY != 1 || Shape.BlockZ != 1 || Shape.BlockX % 32)
    return fail(Ld, "the block is not one-dimensional in whole warps");

  // The byte each warp reads: Symbol + f(warp id) + constant.
  const Expr *Addr = V.operand(Ld, 1);
  const Expr *Symbol = nullptr;
  bool OneSymbol = Addr && !Addr->mentions([&](const Expr *E) {
    if (E->kind() != ExprKind::Symbol)
      return false;
    if (E->symbolSpace() != SymbolSpace::Shared && E->symbolSpace() != SymbolSpace::Generic)
      return true;
    if (!Symbol)
      Symbol = E;
    return Symbol != E;
  });
  if (!Addr || !OneSymbol || !Symbol)
    return fail(Ld, "its address is not a shared variable plus a function of the warp");
  auto At = [&](const Expr *E, unsigned Tid) {
    return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
      if (Leaf == Symbol)
        return 0;
      return leafAt(Leaf, Tid);
    });
  };
  unsigned Warps = Shape.BlockX / 32;
  // Warps that enter the loop: the header's condition on its entry edges.
  GuardAnalysis &Guards = FA->guards();
  const Expr *Enter = Guards.blockCondition(Lp.Header);
  std::vector<bool> Reaches(Warps, true);
  std::vector<int64_t> Offset(Warps, -1);
  for (unsigned W = 0; W < Warps; ++W) {
    std::optional<uint64_t> E0 = Enter ? At(Enter, 32 * W) : std::nullopt;
    std::optional<uint64_t> E1 = Enter ? At(Enter, 32 * W + 31) : std::nullopt;
    if (E0 && E1 && !*E0 && !*E1) {
      Reaches[W] = false;
      continue;
    }
    std::optional<uint64_t> A0 = At(Addr, 32 * W), A1 = At(Addr, 32 * W + 31);
    if (!A0 || !A1 || *A0 != *A1)
      return fail(Ld, "the byte warp " + std::to_string(W) + " reads does not follow from its "
                      "warp id alone");
    Offset[W] = int64_t(*A0);
  }
  if (llvm::none_of(Reaches, [](bool B) { return B; }))
    return fail(Ld, "no warp enters the loop around it");

  std::vector<int64_t> In, Count;
  std::string Why;
  if (!passCounts(Id, L, In, Count, Why))
    return fail(Ld, Why);
  // Passes before instruction I of its block (In is per block, before its first).
  auto PassesAt = [&](InstId I) -> int64_t {
    BlockId B = G.inst(I).Block;
    if (In[B] < 0)
      return In[B];
    int64_t N = In[B];
    for (InstId J = G.block(B).Begin; J < I; ++J)
      N += passes(J, Id);
    return N;
  };
  int64_t First = PassesAt(Ld);
  int64_t Second = Unset;
  for (BlockId Latch : Lp.Latches) {
    int64_t Out = In[Latch] < 0 ? In[Latch] : In[Latch] + Count[Latch];
    if (Out < 0 || (Second != Unset && Second != Out))
      return fail(Ld, "the rounds of the loop around it pass barrier " + std::to_string(Id) +
                      " a different number of times on different paths");
    Second = Out;
  }
  if (First < 0 || Second < 0)
    return fail(Ld, "the passes of barrier " + std::to_string(Id) + " before it differ by path");
  Second += Before;

  // The stores that may write the state bytes.
  int64_t Lo = INT64_MAX, Hi = INT64_MIN;
  for (unsigned W = 0; W < Warps; ++W)
    if (Reaches[W]) {
      Lo = std::min(Lo, Offset[W]);
      Hi = std::max(Hi, Offset[W] + 1);
    }
  struct Store {
    InstId I;
    int64_t Passes;
    int64_t Offset;
    std::vector<uint8_t> Bytes;
  };
  std::vector<Store> Stores;
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
    std::optional<uint64_t> Off;
    if (SA && !SA->mentions([&](const Expr *E) {
          return E->kind() == ExprKind::Symbol && E != Symbol;
        }))
      Off = ExprContext::evaluate(SA, [&](const Expr *Leaf) -> std::optional<uint64_t> {
        if (Leaf == Symbol)
          return 0;
        return std::nullopt;
      });
    if (!Off)
      continue; // not at a constant place of the variable: the note's assumption
    int64_t End = int64_t(*Off) + A.Bytes * A.Elements;
    if (End <= Lo || int64_t(*Off) >= Hi)
      continue;
    unsigned StoreLine = line(I);
    if (Base != "st" || G.inst(I).I->guard())
      return fail(Ld, "the state bytes are also written at ptx line " + std::to_string(StoreLine) +
                      " by an atomic, a reduction or a predicated store");
    if (Loops.loopFor(G.inst(I).Block) != NoIndex &&
        Loops.isNestedIn(Loops.loopFor(G.inst(I).Block), L))
      return fail(Ld, "the state bytes are written inside the loop that reads them (ptx line " +
                      std::to_string(StoreLine) + ")");
    Store S{I, PassesAt(I), int64_t(*Off), {}};
    if (S.Passes < 0)
      return fail(Ld, "the passes of barrier " + std::to_string(Id) +
                      " before the store at ptx line " + std::to_string(StoreLine) +
                      " differ by path");
    for (unsigned E = 0; E < A.Elements; ++E) {
      const Expr *Val = V.operand(I, 1, E);
      if (!Val || !Val->isConstant())
        return fail(Ld, "the store at ptx line " + std::to_string(StoreLine) +
                        " writes a value that is not a constant");
      for (unsigned K = 0; K < A.Bytes; ++K)
        S.Bytes.push_back(uint8_t(Val->payload() >> (8 * K)));
    }
    Stores.push_back(std::move(S));
  }
  // Byte B as a load after Passes passes reads it.
  auto ByteAt = [&](int64_t Byte, int64_t Passes, std::string &Err) -> std::optional<uint8_t> {
    const Store *Best = nullptr;
    for (const Store &S : Stores) {
      if (Byte < S.Offset || Byte >= S.Offset + int64_t(S.Bytes.size()))
        continue;
      if (S.Passes == Passes) {
        Err = "the store at ptx line " + std::to_string(line(S.I)) + " and the read race: "
              "both come after pass " + std::to_string(Passes) + " of barrier " +
              std::to_string(Id);
        return std::nullopt;
      }
      if (S.Passes > Passes)
        continue;
      if (Best && Best->Passes == S.Passes && Best->Bytes[Byte - Best->Offset] !=
                                                  S.Bytes[Byte - S.Offset]) {
        Err = "the stores at ptx lines " + std::to_string(line(Best->I)) + " and " +
              std::to_string(line(S.I)) + " write different states between the same passes";
        return std::nullopt;
      }
      if (!Best || S.Passes > Best->Passes)
        Best = &S;
    }
    if (!Best) {
      Err = "no store of a constant reaches byte " + std::to_string(Byte) + " of " +
            Symbol->name().str() + " before pass " + std::to_string(Passes);
      return std::nullopt;
    }
    return Best->Bytes[Byte - Best->Offset];
  };

  // The load's value in the rewritten program, and where each round leads.
  const Expr *Dest = V.operand(Ld, 0);
  const Expr *LoadLeaf = nullptr;
  if (Dest)
    Dest->mentions([&](const Expr *E) {
      if (E->kind() == ExprKind::Load && !LoadLeaf)
        LoadLeaf = E;
      return false;
    });
  if (!LoadLeaf)
    return fail(Ld, "its value is not a load the analysis tracks");
  std::vector<int64_t> State(Warps, -1);
  BlockId Exit = NoIndex;
  std::string Roles;
  for (unsigned W = 0; W < Warps; ++W) {
    if (!Reaches[W])
      continue;
    std::string Err;
    std::optional<uint8_t> V0 = ByteAt(Offset[W], First, Err);
    if (!V0)
      return fail(Ld, Err);
    std::optional<uint8_t> V1 = ByteAt(Offset[W], Second, Err);
    if (!V1)
      return fail(Ld, Err);
    State[W] = *V0;
    bool Left = false;
    BlockId To = follow(Ld, LoadLeaf, L, W, *V1, Left);
    if (To == NoIndex || !Left)
      return fail(Ld, "warp " + std::to_string(W) + "'s second state (" + std::to_string(*V1) +
                      ") does not lead out of the loop, so the warp would take a second role");
    if (Exit != NoIndex && Exit != To)
      return fail(Ld, "the warps leave the loop for different places");
    Exit = To;
  }
  if (!G.block(Exit).Label || G.block(Exit).LabelFrame != 0)
    return fail(Ld, "the place the exit state leads to has no label");
  const ptx::Label *HeaderLabel = H.Label;
  if (!HeaderLabel || H.LabelFrame != 0)
    return fail(Ld, "the loop header has no label");
  for (BlockId Latch : Lp.Latches) {
    bool Falls = fallsInto(Latch, Lp.Header), Jumps = jumpsTo(Latch, Lp.Header);
    if (G.block(Latch).Terminator == TerminatorKind::Switch ||
        (Falls && Latch + 1 != Lp.Header) || (!Falls && !Jumps) ||
        (Jumps && G.inst(G.terminatorInst(Latch)).Frame != 0))
      return fail(Ld, "a branch back to the loop header is not a plain branch of the kernel");
  }

  // The text. The load's statement becomes the first round's state, from %tid.x.
  StringRef Src = M.source();
  size_t LdAt = G.inst(Ld).I->ptr() - Src.data();
  size_t LdEnd = Src.find(';', LdAt);
  if (LdEnd == StringRef::npos || Src.substr(LdAt, LdEnd - LdAt).contains('\n'))
    return fail(Ld, "the load's statement spans lines");
  ptx::Operand DestOp = G.inst(Ld).I->operands()[0];
  std::string Type = DestOp.isName() ? registerType(Ld, DestOp.text()) : "";
  unsigned Bits = 0;
  if (Type.size() < 2 || StringRef(Type).drop_front().getAsInteger(10, Bits) ||
      (Bits != 16 && Bits != 32 && Bits != 64))
    return fail(Ld, "its destination is not a 16, 32 or 64-bit register");
  std::string S = std::to_string(Serial);
  std::string WReg = "%wsv_dispatch_warp" + S, QReg = "%wsv_dispatch_pred" + S;
  std::string Mov = "mov.b" + std::to_string(Bits) + " " + DestOp.text().str() + ", ";
  // Runs of warps with one state; warps that never load take their neighbours'.
  std::vector<std::pair<unsigned, int64_t>> Runs; // (first warp, state)
  for (unsigned W = 0; W < Warps; ++W)
    if (Reaches[W] && (Runs.empty() || Runs.back().second != State[W]))
      Runs.push_back({Runs.empty() ? 0 : W, State[W]});
  std::string Load;
  llvm::raw_string_ostream OS(Load);
  OS << "{ .reg .b32 " << WReg << "; .reg .pred " << QReg << "; mov.u32 " << WReg
     << ", %tid.x; shr.u32 " << WReg << ", " << WReg << ", 5; " << Mov << Runs.back().second
     << ";";
  for (size_t K = Runs.size() - 1; K-- > 0;)
    OS << " setp.lt.u32 " << QReg << ", " << WReg << ", " << Runs[K + 1].first << "; @" << QReg
       << " " << Mov << Runs[K].second << ";";
  OS << " }";
  Edits.push_back({LdAt, LdEnd + 1 - LdAt, Load});

  // The rounds after the first: the header's prefix again, then where the exit state leads.
  std::string Again = "$L__wsv_dispatch_done" + S;
  std::string Clone;
  llvm::raw_string_ostream CS(Clone);
  // An entry that falls into the header must not fall into the copy placed before it.
  if (llvm::any_of(H.Preds, [&](BlockId P) {
        return !Lp.contains(P) && P + 1 == Lp.Header && fallsInto(P, Lp.Header);
      }))
    CS << "bra.uni " << HeaderLabel->name() << "; ";
  CS << Again << ": ";
  for (InstId I = H.Begin; I < Ld; ++I) {
    std::string One;
    llvm::raw_string_ostream IS(One);
    ptx::printStatement(*G.inst(I).I, IS);
    CS << StringRef(One).trim() << " ";
  }
  CS << "bra.uni " << G.block(Exit).Label->name() << "; ";
  std::replace(Clone.begin(), Clone.end(), '\n', ' ');
  Edits.push_back({size_t(HeaderLabel->ptr() - Src.data()), 0, Clone});
  for (BlockId Latch : Lp.Latches) {
    if (!jumpsTo(Latch, Lp.Header))
      continue;
    ptx::Operand Target = G.inst(G.terminatorInst(Latch)).I->operands()[0];
    Edits.push_back({size_t(Target.ptr() - Src.data()), Target.text().size(), Again});
  }

  // The note: an assumption of every verdict.
  std::string Note;
  llvm::raw_string_ostream NS(Note);
  NS << "warp roles chosen by a shared-memory byte (ld.shared at ptx line " << line(Ld)
     << ") resolved from the stores of constants at ptx line(s) ";
  for (size_t K = 0; K < Stores.size(); ++K)
    NS << (K ? ", " : "") << line(Stores[K].I);
  NS << " and the passes of barrier " << Id << ":";
  for (size_t K = 0; K < Runs.size(); ++K) {
    unsigned Last = K + 1 < Runs.size() ? Runs[K + 1].first - 1 : Warps - 1;
    while (Last > Runs[K].first && !Reaches[Last])
      --Last;
    unsigned FirstW = Runs[K].first;
    while (FirstW < Last && !Reaches[FirstW])
      ++FirstW;
    bool Left = false;
    BlockId To = follow(Ld, LoadLeaf, L, FirstW, uint64_t(Runs[K].second), Left);
    NS << (K ? ";" : "") << " warp" << (Last > FirstW ? "s " : " ") << FirstW;
    if (Last > FirstW)
      NS << "-" << Last;
    NS << " read state " << Runs[K].second;
    if (To != NoIndex && !G.block(To).empty())
      NS << " and run the code at ptx line " << G.location(G.block(To).Begin).Line;
  }
  NS << "; then each reads the exit state and leaves (ptx line "
     << (G.block(Exit).empty() ? 0 : G.location(G.block(Exit).Begin).Line)
     << "); assumes no other store writes bytes " << Lo << "-" << Hi - 1 << " of "
     << Symbol->name();
  Notes.push_back(Note);
  return true;
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

} // namespace

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
