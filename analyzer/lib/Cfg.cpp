//===- Cfg.cpp - basic blocks, edges, inlining ------------------------------------===//
#include "wsv/analyzer/Cfg.h"

#include "wsv/ptx_parser/Printer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

const char *wsv::analyzer::toString(TerminatorKind K) {
  switch (K) {
  case TerminatorKind::FallThrough: return "fallthrough";
  case TerminatorKind::Branch: return "branch";
  case TerminatorKind::CondBranch: return "cond-branch";
  case TerminatorKind::Switch: return "switch";
  case TerminatorKind::Return: return "return";
  case TerminatorKind::Exit: return "exit";
  case TerminatorKind::Trap: return "trap";
  case TerminatorKind::CondExit: return "cond-exit";
  case TerminatorKind::Unresolved: return "unresolved";
  }
  return "?";
}

const char *wsv::analyzer::toString(CallStatus S) {
  switch (S) {
  case CallStatus::Inlined: return "inlined";
  case CallStatus::NotRequested: return "not inlined (inlining off)";
  case CallStatus::Extern: return "extern (no body in this module)";
  case CallStatus::Indirect: return "indirect";
  case CallStatus::Recursive: return "recursive";
  case CallStatus::TooDeep: return "inlining depth limit";
  case CallStatus::Unknown: return "unknown callee";
  }
  return "?";
}

static bool isControlOpcode(StringRef Base) {
  return Base == "bra" || Base == "brx" || Base == "ret" || Base == "exit" || Base == "trap";
}

namespace wsv {
namespace analyzer {

/// Builds a Cfg in three steps: flatten the function (and inlined callees) into a sequence of
/// labels and instructions, cut it into blocks, then add the edges.
class CfgBuilder {
public:
  CfgBuilder(Cfg &G, const CfgOptions &Options, ptx::DiagnosticEngine *Diags)
      : G(G), Options(Options), Diags(Diags) {}

  void build();

private:
  struct Item {
    enum KindT : uint8_t { Label, Inst, Continuation } Kind;
    const ptx::Label *L = nullptr;
    unsigned Frame = 0;
    CfgInst CI;
  };

  const ptx::NameResolver &resolver(const ptx::Function &F);
  void emitFunction(unsigned FrameIndex);
  void emitCall(const ptx::Instruction &I, const ptx::Scope &Scope, unsigned FrameIndex,
                InstId Id);
  void cutBlocks();
  void addEdges();
  void order();
  BlockId endBlock();
  BlockId nextBlock(BlockId B) { return B + 1 < G.Blocks.size() ? B + 1 : endBlock(); }
  void issue(llvm::SMLoc Loc, const llvm::Twine &Message);
  bool isNoReturnCall(InstId I) const;

  Cfg &G;
  const CfgOptions &Options;
  ptx::DiagnosticEngine *Diags;
  std::vector<Item> Items;
  InstId NextInst = 0;
  llvm::DenseMap<std::pair<const ptx::Label *, unsigned>, BlockId> LabelBlocks;
  llvm::DenseMap<unsigned, BlockId> ContinuationBlocks; ///< inlined frame -> block after call
  BlockId EndBlock = NoIndex;
};

} // namespace analyzer
} // namespace wsv

const ptx::NameResolver &CfgBuilder::resolver(const ptx::Function &F) {
  auto &Slot = G.Resolvers[&F];
  if (!Slot)
    Slot = std::make_unique<ptx::NameResolver>(F);
  return *Slot;
}

void CfgBuilder::issue(llvm::SMLoc Loc, const llvm::Twine &Message) {
  G.Issues.push_back({Loc, Message.str()});
  if (Diags)
    Diags->error(Loc, Message);
}

void CfgBuilder::emitFunction(unsigned FrameIndex) {
  const ptx::Function &F = *G.Frames[FrameIndex].Function;
  ptx::forEachStatement(*F.body(), [&](const ptx::Statement &S, const ptx::Scope &Parent) {
    if (const auto *L = llvm::dyn_cast<ptx::Label>(&S)) {
      Items.push_back({Item::Label, L, FrameIndex, {}});
      return;
    }
    const auto *I = llvm::dyn_cast<ptx::Instruction>(&S);
    if (!I)
      return;
    InstId Id = NextInst++;
    Items.push_back({Item::Inst, nullptr, FrameIndex, {I, &Parent, FrameIndex, NoIndex}});
    G.Occurrences[{I, FrameIndex}] = Id;
    if (I->baseName() == "call")
      emitCall(*I, Parent, FrameIndex, Id);
  });
}

// call{.uni} (ret), callee, (args) {, targets | prototype}; the return and argument lists are
// optional.
void CfgBuilder::emitCall(const ptx::Instruction &I, const ptx::Scope &Scope, unsigned FrameIndex,
                          InstId Id) {
  CallSite C;
  C.Inst = Id;
  ptx::OperandRange Ops = I.operands();
  size_t Next = 0;
  if (Next < Ops.size() && Ops[Next].is(ptx::OperandKind::List))
    C.Returns = Ops[Next++];
  ptx::Operand Target = Next < Ops.size() ? Ops[Next++] : ptx::Operand();
  if (Next < Ops.size() && Ops[Next].is(ptx::OperandKind::List))
    C.Arguments = Ops[Next++];
  const ptx::NameResolver &Names = *G.Frames[FrameIndex].Names;
  const Frame &Caller = G.Frames[FrameIndex];

  if (!Target || !Target.isName()) {
    C.Status = CallStatus::Unknown;
  } else if (Names.findRegister(Scope, Target.text())) {
    C.Status = CallStatus::Indirect;
    if (Next < Ops.size() && Ops[Next].isName())
      if (const auto *TL =
              llvm::dyn_cast_or_null<ptx::TargetList>(Names.findLabel(Scope, Ops[Next].text())))
        if (!TL->isBranchTargets())
          for (ptx::Operand T : TL->targets())
            if (const ptx::Function *Fn = G.M.function(T.text()))
              C.Candidates.push_back(Fn);
  } else if (const ptx::Function *Callee = G.M.function(Target.text())) {
    C.Callee = Callee;
    bool Recursive = false;
    for (unsigned Fr = FrameIndex; Fr != NoIndex; Fr = G.Frames[Fr].Parent)
      Recursive |= G.Frames[Fr].Function == Callee;
    if (!Callee->isDefinition())
      C.Status = CallStatus::Extern;
    else if (!Options.InlineCalls)
      C.Status = CallStatus::NotRequested;
    else if (Recursive)
      C.Status = CallStatus::Recursive;
    else if (Caller.Depth + 1 > Options.MaxInlineDepth)
      C.Status = CallStatus::TooDeep;
    else
      C.Status = CallStatus::Inlined;
  } else {
    C.Status = CallStatus::Unknown;
  }

  if (C.Status == CallStatus::Inlined) {
    unsigned NewFrame = G.Frames.size();
    Frame Fr;
    Fr.Function = C.Callee;
    Fr.Names = &resolver(*C.Callee);
    Fr.Parent = FrameIndex;
    Fr.CallSite = Id;
    Fr.Depth = Caller.Depth + 1;
    G.Frames.push_back(Fr);
    C.InlinedFrame = NewFrame;
    G.CallIndex[Id] = G.Calls.size();
    G.Calls.push_back(C);
    emitFunction(NewFrame);
    Items.push_back({Item::Continuation, nullptr, NewFrame, {}});
    return;
  }
  G.CallIndex[Id] = G.Calls.size();
  G.Calls.push_back(C);
}

bool CfgBuilder::isNoReturnCall(InstId I) const {
  auto It = G.CallIndex.find(I);
  if (It == G.CallIndex.end())
    return false;
  const CallSite &C = G.Calls[It->second];
  return C.Status != CallStatus::Inlined && C.Callee && C.Callee->isNoReturn();
}

void CfgBuilder::cutBlocks() {
  bool NeedNew = true;
  bool Marked = false; // the current block already starts at a label or a return point
  auto Start = [&] {
    BasicBlock B;
    B.Index = G.Blocks.size();
    B.Begin = B.End = G.Insts.size();
    G.Blocks.push_back(B);
    NeedNew = false;
    Marked = false;
  };
  for (const Item &It : Items) {
    if (It.Kind != Item::Inst) {
      // Every label starts a block, even right after another label: a loop whose first
      // statement is an inline-asm wait loop has its own header, distinct from the wait's.
      if (NeedNew || !G.Blocks.back().empty() || Marked)
        Start();
      Marked = true;
      BasicBlock &B = G.Blocks.back();
      if (It.Kind == Item::Label) {
        LabelBlocks[{It.L, It.Frame}] = B.Index;
        if (!B.Label) {
          B.Label = It.L;
          B.LabelFrame = It.Frame;
        }
      } else {
        ContinuationBlocks[It.Frame] = B.Index;
      }
      continue;
    }
    if (NeedNew)
      Start();
    CfgInst CI = It.CI;
    CI.Block = G.Blocks.back().Index;
    G.Insts.push_back(CI);
    G.Blocks.back().End = G.Insts.size();
    InstId Id = G.Insts.size() - 1;
    if (isControlOpcode(CI.I->baseName()) || isNoReturnCall(Id))
      NeedNew = true;
  }
  if (G.Blocks.empty())
    Start();
  // Occurrence ids were handed out in item order, which is instruction order.
}

BlockId CfgBuilder::endBlock() {
  if (EndBlock == NoIndex) {
    BasicBlock B;
    B.Index = G.Blocks.size();
    B.Begin = B.End = G.Insts.size();
    B.Terminator = TerminatorKind::Return;
    G.Blocks.push_back(B);
    EndBlock = B.Index;
  }
  return EndBlock;
}

void CfgBuilder::addEdges() {
  // endBlock() may append while this runs; iterate by index over the blocks cut so far.
  const unsigned NumCut = G.Blocks.size();
  for (BlockId B = 0; B < NumCut; ++B) {
    InstId T = G.terminatorInst(B);
    if (T == NoIndex) {
      bool AfterNoReturn = !G.Blocks[B].empty() && isNoReturnCall(G.Blocks[B].End - 1);
      if (AfterNoReturn) {
        bool Guarded = G.Insts[G.Blocks[B].End - 1].I->guard().isValid();
        G.Blocks[B].Terminator = Guarded ? TerminatorKind::CondExit : TerminatorKind::Exit;
        if (Guarded)
          G.Blocks[B].Succs.push_back(nextBlock(B));
        continue;
      }
      // Running off the end of the function returns from it.
      if (B + 1 == NumCut && EndBlock == NoIndex) {
        G.Blocks[B].Terminator = TerminatorKind::Return;
        continue;
      }
      G.Blocks[B].Terminator = TerminatorKind::FallThrough;
      G.Blocks[B].Succs.push_back(nextBlock(B));
      continue;
    }
    const CfgInst &CI = G.Insts[T];
    const ptx::Instruction &I = *CI.I;
    const Frame &Fr = G.Frames[CI.Frame];
    const bool Guarded = I.guard().isValid();
    StringRef Base = I.baseName();
    auto Label = [&](const ptx::Statement *S) -> BlockId {
      const auto *L = llvm::dyn_cast_or_null<ptx::Label>(S);
      if (!L)
        return NoIndex;
      auto It = LabelBlocks.find({L, CI.Frame});
      return It == LabelBlocks.end() ? NoIndex : It->second;
    };
    if (Base == "bra") {
      BlockId Target = Label(Fr.Names->branchTarget(I));
      if (Target == NoIndex) {
        StringRef Name = I.operands().empty() ? StringRef() : I.operands().back().text();
        issue(I.loc(), "branch target '" + Name + "' is not a label of this function");
        G.Blocks[B].Terminator = TerminatorKind::Unresolved;
        continue;
      }
      G.Blocks[B].Succs.push_back(Target);
      if (Guarded && nextBlock(B) != Target) {
        G.Blocks[B].Succs.push_back(nextBlock(B));
        G.Blocks[B].Terminator = TerminatorKind::CondBranch;
      } else {
        G.Blocks[B].Terminator = TerminatorKind::Branch;
      }
    } else if (Base == "brx") {
      // brx.idx{.uni} index, tlist; tlist names a `.branchtargets` list.
      const ptx::TargetList *TL = nullptr;
      if (I.operands().size() >= 2 && I.operands()[1].isName())
        TL = llvm::dyn_cast_or_null<ptx::TargetList>(
            Fr.Names->findLabel(*CI.Scope, I.operands()[1].text()));
      if (!TL || !TL->isBranchTargets()) {
        issue(I.loc(), "brx.idx needs a '.branchtargets' list of this function");
        G.Blocks[B].Terminator = TerminatorKind::Unresolved;
        continue;
      }
      G.Blocks[B].Terminator = TerminatorKind::Switch;
      for (ptx::Operand Op : TL->targets()) {
        BlockId Target = Label(Fr.Names->findLabel(*CI.Scope, Op.text()));
        if (Target == NoIndex) {
          issue(Op.loc(), "branch target '" + Op.text() + "' is not a label of this function");
          G.Blocks[B].Terminator = TerminatorKind::Unresolved;
          G.Blocks[B].Succs.clear();
          G.Blocks[B].SwitchTargets.clear();
          break;
        }
        G.Blocks[B].SwitchTargets.push_back(Target);
        if (!llvm::is_contained(G.Blocks[B].Succs, Target))
          G.Blocks[B].Succs.push_back(Target);
      }
      if (Guarded && G.Blocks[B].Terminator == TerminatorKind::Switch &&
          !llvm::is_contained(G.Blocks[B].Succs, nextBlock(B)))
        G.Blocks[B].Succs.push_back(nextBlock(B));
    } else if (Base == "ret" && CI.Frame != 0) {
      // An inlined function returns to the instruction after its call.
      BlockId Cont = ContinuationBlocks.lookup(CI.Frame);
      G.Blocks[B].Succs.push_back(Cont);
      if (Guarded && nextBlock(B) != Cont) {
        G.Blocks[B].Succs.push_back(nextBlock(B));
        G.Blocks[B].Terminator = TerminatorKind::CondBranch;
      } else {
        G.Blocks[B].Terminator = TerminatorKind::Branch;
      }
    } else {
      // ret (of the analyzed function), exit, trap.
      if (Guarded) {
        G.Blocks[B].Terminator = TerminatorKind::CondExit;
        G.Blocks[B].Succs.push_back(nextBlock(B));
      } else {
        G.Blocks[B].Terminator = Base == "ret"    ? TerminatorKind::Return
                                 : Base == "exit" ? TerminatorKind::Exit
                                                  : TerminatorKind::Trap;
      }
    }
  }
  for (BasicBlock &B : G.Blocks)
    for (BlockId S : B.Succs)
      G.Blocks[S].Preds.push_back(B.Index);
}

void CfgBuilder::order() {
  const unsigned N = G.Blocks.size();
  G.RpoNumber.assign(N, NoIndex);
  std::vector<BlockId> PostOrder;
  PostOrder.reserve(N);
  llvm::SmallVector<std::pair<BlockId, unsigned>, 32> Stack;
  G.Blocks[0].Reachable = true;
  Stack.push_back({0, 0});
  while (!Stack.empty()) {
    auto &[B, Next] = Stack.back();
    if (Next < G.Blocks[B].Succs.size()) {
      BlockId S = G.Blocks[B].Succs[Next++];
      if (!G.Blocks[S].Reachable) {
        G.Blocks[S].Reachable = true;
        Stack.push_back({S, 0});
      }
      continue;
    }
    PostOrder.push_back(B);
    Stack.pop_back();
  }
  G.Rpo.assign(PostOrder.rbegin(), PostOrder.rend());
  for (unsigned I = 0; I < G.Rpo.size(); ++I)
    G.RpoNumber[G.Rpo[I]] = I;

  // Blocks that can reach a normal end (ret, exit, guarded or not); the rest never return.
  std::vector<char> Returns(N, 0);
  llvm::SmallVector<BlockId, 32> Work;
  for (BlockId B = 0; B < N; ++B) {
    InstId T = G.Blocks[B].empty() ? NoIndex : G.Blocks[B].End - 1;
    bool Traps = T != NoIndex && G.Insts[T].I->baseName() == "trap";
    TerminatorKind K = G.Blocks[B].Terminator;
    if ((K == TerminatorKind::Return || K == TerminatorKind::Exit ||
         K == TerminatorKind::CondExit || K == TerminatorKind::Unresolved) &&
        !Traps) {
      Returns[B] = 1;
      Work.push_back(B);
    }
  }
  while (!Work.empty()) {
    BlockId B = Work.pop_back_val();
    for (BlockId P : G.Blocks[B].Preds)
      if (!Returns[P]) {
        Returns[P] = 1;
        Work.push_back(P);
      }
  }
  for (BlockId B = 0; B < N; ++B)
    G.Blocks[B].NeverReturns = !Returns[B];
}

void CfgBuilder::build() {
  Frame Root;
  Root.Function = &G.F;
  Root.Names = &resolver(G.F);
  G.Frames.push_back(Root);
  emitFunction(0);
  cutBlocks();
  addEdges();
  order();
}

//===- Cfg ------------------------------------------------------------------------------===//

Cfg::Cfg(const ptx::Module &M, const ptx::Function &F, const CfgOptions &Options,
         ptx::DiagnosticEngine *Diags)
    : M(M), F(F) {
  assert(F.isDefinition() && "a control-flow graph needs a function body");
  CfgBuilder(*this, Options, Diags).build();
}

Cfg::~Cfg() = default;

InstId Cfg::terminatorInst(BlockId B) const {
  const BasicBlock &BB = Blocks[B];
  if (BB.empty())
    return NoIndex;
  InstId Last = BB.End - 1;
  return isControlOpcode(Insts[Last].I->baseName()) ? Last : NoIndex;
}

llvm::SmallVector<BlockId, 4> Cfg::unreachableBlocks() const {
  llvm::SmallVector<BlockId, 4> Out;
  for (const BasicBlock &B : Blocks)
    if (!B.Reachable)
      Out.push_back(B.Index);
  return Out;
}

const CallSite *Cfg::callAt(InstId I) const {
  auto It = CallIndex.find(I);
  return It == CallIndex.end() ? nullptr : &Calls[It->second];
}

std::optional<InstId> Cfg::find(const ptx::Instruction &I, unsigned Frame) const {
  auto It = Occurrences.find({&I, Frame});
  if (It == Occurrences.end())
    return std::nullopt;
  return It->second;
}

void Cfg::print(llvm::raw_ostream &OS) const {
  OS << "cfg " << F.name() << ": " << Blocks.size() << " blocks, " << Insts.size()
     << " instructions, " << Frames.size() << " frames\n";
  for (const BasicBlock &B : Blocks) {
    OS << "bb" << B.Index;
    if (B.Label)
      OS << " " << B.Label->name();
    if (B.LabelFrame)
      OS << " (frame " << B.LabelFrame << ")";
    if (!B.Reachable)
      OS << " unreachable";
    else if (B.NeverReturns)
      OS << " never-returns";
    OS << ": " << toString(B.Terminator);
    if (!B.Succs.empty()) {
      OS << " ->";
      for (BlockId S : B.Succs)
        OS << " bb" << S;
    }
    OS << "\n";
    for (const CfgInst &CI : instructions(B.Index)) {
      OS << "  ";
      if (CI.Frame)
        OS << "[" << CI.Frame << "] ";
      std::string Text;
      llvm::raw_string_ostream TS(Text);
      ptx::printStatement(*CI.I, TS);
      OS << StringRef(TS.str()).trim() << "\n";
    }
  }
}
