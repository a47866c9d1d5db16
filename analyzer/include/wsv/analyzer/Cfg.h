//===- Cfg.h - control-flow graph of a PTX function -------------------------------===//
//
// Basic blocks over the flattened instruction sequence of one function definition. The
// `{ ... }` scopes nvcc wraps around inline asm are part of the function's code: their
// instructions take their place in the sequence and their labels start blocks like any other.
// Branch targets resolve innermost scope first (ptx::NameResolver), so two sibling scopes that
// both say `WAIT:` and `bra.uni WAIT;` get two different loops.
//
// Edges: `bra`/`bra.uni` (a guarded branch has two successors, the target first), `brx.idx`
// (its `.branchtargets` list), `ret`/`exit`/`trap` (no successors; the block exits), and
// fall-through. A guarded `ret`/`exit`/`trap` ends its block with one successor, the
// fall-through, and the block still counts as exiting. Other predicated instructions stay in
// their block with their guard. A `call` is kept as an instruction and recorded as a CallSite;
// with CfgOptions::InlineCalls the body of a `.func` defined in the same module is spliced in
// at the call (its `ret` jumps to the instruction after the call), up to a depth limit and
// never recursively. Calls that stay calls (extern declarations such as vprintf, indirect
// calls, recursion) are assumed to have no synchronization effect; CallSite says why each one
// was not inlined.
//
// With inlining one PTX instruction can occur several times in the graph, once per frame:
// every occurrence is a CfgInst {instruction, scope, frame}, numbered densely (InstId) so later
// analyses can keep per-occurrence tables in vectors.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"
#include "wsv/ptx_parser/Diagnostics.h"
#include "wsv/ptx_parser/Module.h"
#include "wsv/ptx_parser/NameResolution.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

using InstId = unsigned;
using BlockId = unsigned;
constexpr unsigned NoIndex = ~0u;

struct CfgOptions {
  /// Splice the bodies of `.func` definitions of the same module in at their calls.
  bool InlineCalls = true;
  /// Calls nested deeper than this stay calls (the analyzed function is depth 0).
  unsigned MaxInlineDepth = 8;
};

/// One level of inlining: frame 0 is the analyzed function, each inlined call adds one.
struct Frame {
  const ptx::Function *Function = nullptr;
  const ptx::NameResolver *Names = nullptr;
  unsigned Parent = NoIndex;       ///< the caller's frame; NoIndex for frame 0
  InstId CallSite = NoIndex;       ///< the call instruction in the caller's frame
  unsigned Depth = 0;
};

/// An occurrence of an instruction in the graph.
struct CfgInst {
  const ptx::Instruction *I = nullptr;
  const ptx::Scope *Scope = nullptr; ///< where its names resolve
  unsigned Frame = 0;
  BlockId Block = NoIndex;
};

enum class TerminatorKind : uint8_t {
  FallThrough, ///< no control instruction: the next block follows
  Branch,      ///< unguarded bra (or a guarded one whose arms meet at the same block)
  CondBranch,  ///< guarded bra: Succs[0] when the branch is taken, Succs[1] otherwise
  Switch,      ///< brx.idx: SwitchTargets[k] for index k; a guarded one falls through last
  Return,      ///< ret of the analyzed function, or running off its end
  Exit,        ///< exit, or a call to a .noreturn function that is not inlined
  Trap,        ///< trap
  CondExit,    ///< guarded ret/exit/trap: Succs[0] is the fall-through
  Unresolved,  ///< a branch whose target could not be found (reported as an issue)
};
const char *toString(TerminatorKind K);

struct BasicBlock {
  BlockId Index = 0;
  InstId Begin = 0, End = 0; ///< its instructions: [Begin, End) of Cfg::instructions()
  llvm::SmallVector<BlockId, 2> Succs;
  llvm::SmallVector<BlockId, 2> Preds;
  TerminatorKind Terminator = TerminatorKind::FallThrough;
  llvm::SmallVector<BlockId, 4> SwitchTargets; ///< brx.idx: the block of each index
  const ptx::Label *Label = nullptr;           ///< the first label at its start, if any
  unsigned LabelFrame = 0;
  bool Reachable = false;
  /// No path from here reaches a ret or exit: the thread traps (an assertion, a wait's
  /// timeout that reports a hang) or loops forever. Loops treat such exits as aborts.
  bool NeverReturns = false;

  unsigned size() const { return End - Begin; }
  bool empty() const { return Begin == End; }
  /// Threads can leave the kernel at the end of this block.
  bool exits() const {
    return Terminator == TerminatorKind::Return || Terminator == TerminatorKind::Exit ||
           Terminator == TerminatorKind::Trap || Terminator == TerminatorKind::CondExit ||
           Terminator == TerminatorKind::Unresolved;
  }
};

/// Why a call stayed a call.
enum class CallStatus : uint8_t {
  Inlined,
  NotRequested, ///< CfgOptions::InlineCalls is off
  Extern,       ///< the callee is only declared in this module (vprintf, malloc)
  Indirect,     ///< through a register; Candidates lists `.calltargets` when given
  Recursive,    ///< the callee is already being inlined further up
  TooDeep,      ///< MaxInlineDepth reached
  Unknown,      ///< the callee is not a function of this module
};
const char *toString(CallStatus S);

struct CallSite {
  InstId Inst = NoIndex;
  const ptx::Function *Callee = nullptr; ///< nullptr for indirect calls
  llvm::SmallVector<const ptx::Function *, 2> Candidates;
  CallStatus Status = CallStatus::Unknown;
  unsigned InlinedFrame = NoIndex; ///< the frame of the inlined body
  ptx::Operand Returns;            ///< the `(ret)` list, invalid when absent
  ptx::Operand Arguments;          ///< the `(args)` list, invalid when absent
};

/// Something in the input that makes the graph incomplete (also reported to the
/// DiagnosticEngine given to build()).
struct CfgIssue {
  llvm::SMLoc Loc;
  std::string Message;
};

class Cfg {
public:
  /// Builds the graph of F, a definition in M. Problems in the input (a branch to a label
  /// that does not exist) are reported to Diags when given and kept in issues().
  Cfg(const ptx::Module &M, const ptx::Function &F, const CfgOptions &Options = {},
      ptx::DiagnosticEngine *Diags = nullptr);
  Cfg(const Cfg &) = delete;
  Cfg &operator=(const Cfg &) = delete;
  ~Cfg();

  const ptx::Module &module() const { return M; }
  const ptx::Function &function() const { return F; }

  llvm::ArrayRef<BasicBlock> blocks() const { return Blocks; }
  const BasicBlock &block(BlockId B) const { return Blocks[B]; }
  unsigned size() const { return Blocks.size(); }
  BlockId entry() const { return 0; }

  llvm::ArrayRef<CfgInst> instructions() const { return Insts; }
  const CfgInst &inst(InstId I) const { return Insts[I]; }
  llvm::ArrayRef<CfgInst> instructions(BlockId B) const {
    return llvm::ArrayRef<CfgInst>(Insts).slice(Blocks[B].Begin, Blocks[B].size());
  }
  /// The control instruction that ends B (bra, brx.idx, ret, exit, trap), or NoIndex.
  InstId terminatorInst(BlockId B) const;

  /// Reachable blocks in reverse post-order, the entry first.
  llvm::ArrayRef<BlockId> reversePostOrder() const { return Rpo; }
  /// Position of B in reversePostOrder(); NoIndex when B is unreachable.
  unsigned rpoNumber(BlockId B) const { return RpoNumber[B]; }
  /// Blocks no path from the entry reaches.
  llvm::SmallVector<BlockId, 4> unreachableBlocks() const;

  llvm::ArrayRef<Frame> frames() const { return Frames; }
  llvm::ArrayRef<CallSite> calls() const { return Calls; }
  /// The call site recorded for a call instruction occurrence, or nullptr.
  const CallSite *callAt(InstId I) const;
  llvm::ArrayRef<CfgIssue> issues() const { return Issues; }

  /// The occurrence of I in the given frame, if I is in the graph there.
  std::optional<InstId> find(const ptx::Instruction &I, unsigned Frame = 0) const;
  /// File, line and column of an occurrence (of the PTX text; inlined code keeps its own).
  ptx::SourceLocation location(InstId I) const { return M.location(*Insts[I].I); }

  /// A listing for debugging and golden tests: blocks, labels, successors, instructions.
  void print(llvm::raw_ostream &OS) const;

private:
  friend class CfgBuilder;
  const ptx::Module &M;
  const ptx::Function &F;
  std::vector<BasicBlock> Blocks;
  std::vector<CfgInst> Insts;
  std::vector<BlockId> Rpo;
  std::vector<unsigned> RpoNumber;
  std::vector<Frame> Frames;
  std::vector<CallSite> Calls;
  std::vector<CfgIssue> Issues;
  llvm::DenseMap<const ptx::Function *, std::unique_ptr<ptx::NameResolver>> Resolvers;
  llvm::DenseMap<std::pair<const ptx::Instruction *, unsigned>, InstId> Occurrences;
  llvm::DenseMap<InstId, unsigned> CallIndex;
};

} // namespace analyzer
} // namespace wsv
