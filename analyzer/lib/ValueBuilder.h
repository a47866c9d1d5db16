//===- ValueBuilder.h - the machinery behind ValueAnalysis ------------------------===//
//
// One class, several files: ValueBuilder.cpp walks the graph and joins states,
// Semantics.cpp says what each instruction writes, Induction.cpp matches induction shapes and
// builds closed forms, TripCount.cpp derives trip counts and the values that leave a loop,
// SpinLoops.cpp recognizes wait loops.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Values.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <tuple>
#include <set>
#include <vector>

namespace wsv {
namespace analyzer {

class Solver;

/// Register values at one program point, indexed by RegId; nullptr: never written on any
/// path here. Shorter than numRegisters() means the missing ones are nullptr.
using State = std::vector<const Expr *>;

struct RegInfo {
  llvm::StringRef Name; ///< interned in the ExprContext
  unsigned Width = 32;
  unsigned Frame = 0;
  bool IsParamCell = false; ///< a byte offset of a `.param` variable of a call sequence
};

class ValueBuilder {
public:
  ValueBuilder(ValueAnalysis &VA, const DominatorTree &Dom, Solver *S);
  void run();

  //===- Registers (ValueBuilder.cpp) ------------------------------------------------===//
  std::optional<RegId> lookupRegister(InstId I, llvm::StringRef Name);
  std::optional<RegId> resolveRegister(InstId I, llvm::StringRef Name);
  /// The cell a `.param` access at I touches: the actual variable when the named one is a
  /// formal parameter of an inlined function. nullopt for kernel parameters and non-params.
  std::optional<RegId> paramCell(const ptx::VariableDecl &Var, unsigned Frame, uint64_t Offset,
                                 unsigned Width, bool Create);
  /// Whether Var (resolved to Frame) is a parameter of that frame's function, read with
  /// ld.param as a Param leaf rather than a cell.
  bool isFunctionParam(const ptx::VariableDecl &Var, unsigned Frame) const;
  /// The parameter variable a name means at I, with inlined formals mapped to actuals.
  std::pair<const ptx::VariableDecl *, unsigned> resolveParam(InstId I, llvm::StringRef Name);
  RegId intern(std::tuple<const void *, unsigned, uint64_t> Key, const RegInfo &Info);
  static const Expr *get(const State &S, RegId R) { return R < S.size() ? S[R] : nullptr; }
  static void set(State &S, RegId R, const Expr *V) {
    if (R >= S.size())
      S.resize(R + 1, nullptr);
    S[R] = V;
  }
  const Expr *undefined(RegId R);
  /// undefined()'s leaf of each register, made once.
  std::vector<const Expr *> Undefined;

  //===- Instructions (Semantics.cpp) ------------------------------------------------===//
  /// Applies I to S and records its operand values.
  void transfer(InstId I, State &S);
  /// Registers I writes (interning them), for loop-defined sets.
  void writtenRegisters(InstId I, llvm::SmallVectorImpl<RegId> &Out);
  static bool hasDestination(const ptx::Instruction &I);
  unsigned elementsOf(ptx::Operand Op) const;
  /// The value of a leaf operand (register, literal, special register, symbol) as Width bits.
  const Expr *readLeaf(InstId I, ptx::Operand Op, unsigned Width, const State &S);
  /// A source operand as recorded: a register at its own width, a literal at the
  /// instruction's type width.
  const Expr *readNatural(InstId I, ptx::Operand Op, const State &S);
  /// The address an address operand denotes: base + offset.
  const Expr *readAddress(InstId I, ptx::Operand Op, const State &S);
  /// The values I writes to its destination elements (nullptr entries for sinks).
  void compute(InstId I, const State &S, llvm::SmallVectorImpl<const Expr *> &Results);
  const Expr *opaqueResult(InstId I, unsigned Element, unsigned Width, llvm::StringRef Why);
  const Expr *loadParam(InstId I, ptx::Operand Address, uint64_t Extra, unsigned Width,
                        const State &S);
  /// Whether Recording: transfer() stores operand values (off when replaying a block).
  bool Recording = true;

  //===- Graph walk (ValueBuilder.cpp) -----------------------------------------------===//
  void processRegion(LoopId L);
  void processLoop(LoopId L);
  void processBlock(BlockId B);
  State join(BlockId B, llvm::ArrayRef<BlockId> Preds);
  const Expr *joinValue(BlockId B, RegId R,
                        llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming);
  const Expr *gatedValue(BlockId B, llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming);
  /// A join of more than two edges as nested selects, one per branch that splits them.
  const Expr *gatedMultiway(BlockId B,
                            llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming);
  const State *edgeState(BlockId From, BlockId To) const;
  const Expr *edgeCondition(BlockId From, BlockId To);
  bool forwardReaches(BlockId From, BlockId To) const { return Reach[From].test(To); }

  //===- Loops (Induction.cpp, TripCount.cpp, SpinLoops.cpp) -------------------------===//
  void finishLoop(LoopId L);
  void recognizeInductions(LoopId L);
  /// Among Phis (header phis of L no other shape matched), those that trail an induction
  /// variable of L by one iteration (Induction.cpp).
  void recognizeLagged(LoopId L, llvm::ArrayRef<const Expr *> Phis);
  /// Where Gate holds in the iterations i < G of loop L and never after (a * i + b < X, X
  /// invariant): how many times it held before iteration i, min(i, G), as `gate(i) ? i : G`;
  /// nullptr otherwise.
  const Expr *prefixGateAdvances(LoopId L, const Expr *Gate);
  /// Among Phis, rings advanced only where another ring of L is at a given value (Triton's
  /// accumulator ring in a loop over tiles and k-tiles as one), or in a first run of
  /// iterations (prefixGateAdvances) (Induction.cpp).
  void recognizeGated(LoopId L, llvm::ArrayRef<const Expr *> Phis);
  void computeTripCount(LoopId L);
  void recognizeSpinWait(LoopId L);
  void transformExits(LoopId L);
  /// E in iteration Iter of L: IV phis by their closed forms at Iter, IV updates by the
  /// closed form at Iter + 1. nullptr when E involves a phi of L with no closed form.
  const Expr *atIteration(const Expr *E, LoopId L, const Expr *Iter);
  bool isInvariant(const Expr *E, LoopId L) const;
  const Expr *subtractThroughSelects(const Expr *Update, const Expr *Phi);
  BlockId leafBlock(const Expr *Leaf) const;
  const Expr *closedForm(const Expr *E);
  /// What holds on entry to L: the conditions of the branches that lead only to it, and what
  /// every launch of the kernel guarantees (launchFacts).
  /// The conditions of the edges that are the only way to Child from the blocks dominating
  /// it, walking up while Within holds (entryFacts: to the entry; infeasibleExit: to a loop's
  /// header).
  void dominatingFacts(BlockId Child, llvm::function_ref<bool(BlockId)> Within,
                       llvm::SmallVectorImpl<const Expr *> &Facts);
  llvm::SmallVector<const Expr *, 4> entryFacts(LoopId L);
  /// What the kernel's directives guarantee of every launch: with `.reqnctapercluster X, ...`
  /// the grid is a whole number of clusters (CUDA refuses any other launch), so %nctaid.x
  /// is a multiple of X and at least X (LaunchShape::gridFacts).
  void launchFacts(llvm::SmallVectorImpl<const Expr *> &Facts);
  bool implies(llvm::ArrayRef<const Expr *> Facts, const Expr *Goal);
  /// Whether no thread takes the exit edge From -> To of L: the conditions of the edges
  /// that are the only way from L's header to From contradict the edge's own (clang's
  /// comparison tree for an exhaustive switch, whose impossible default exits).
  bool infeasibleExit(LoopId L, BlockId From, BlockId To);
  std::string describeUnknown(const Expr *E, LoopId L) const;

  ValueAnalysis &VA;
  const Cfg &G;
  const DominatorTree &Dom;
  const LoopInfo &Loops;
  ExprContext &Ctx;
  Solver *S;

  std::vector<RegInfo> Regs;
  /// lookupRegister answers by operand text (its address in the buffer) and frame: the same
  /// operand resolves the same way every time the block is walked.
  llvm::DenseMap<std::pair<const char *, unsigned>, RegId> Resolved;
  llvm::DenseMap<std::tuple<const void *, unsigned, uint64_t>, RegId> RegIndex;
  /// (inlined frame, formal `.param` of its function) -> (caller frame, actual variable).
  llvm::DenseMap<std::pair<unsigned, const ptx::VariableDecl *>,
                 std::pair<unsigned, const ptx::VariableDecl *>>
      ParamAlias;
  /// Return variables of calls that are not inlined: the call that writes them.
  llvm::DenseMap<std::pair<const ptx::VariableDecl *, unsigned>, InstId> ReturnedBy;
  /// The cells of each `.param` variable (in its frame), to clobber them at a call.
  llvm::DenseMap<std::pair<const ptx::VariableDecl *, unsigned>, llvm::SmallVector<RegId, 2>>
      CellsOf;

  std::vector<unsigned> OperandStart; ///< per InstId, into OperandValues
  std::vector<const Expr *> OperandValues;
  std::vector<const Expr *> Guards;

  std::vector<State> In, Out;
  std::vector<char> Done;
  llvm::DenseMap<std::pair<BlockId, BlockId>, State> EdgeStates;
  std::vector<llvm::BitVector> Reach; ///< forward reachability, back edges ignored

  llvm::DenseMap<const Expr *, PhiInfo> Phis;
  std::vector<LoopSummary> Summaries;
  std::vector<llvm::BitVector> LoopDefs;
  /// Values leaving a loop that are an induction variable's closed form at the trip count:
  /// (loop, induction index).
  llvm::DenseMap<const Expr *, std::pair<LoopId, unsigned>> ExitForms;
  llvm::DenseMap<const Expr *, const Expr *> ClosedForms;
  /// Implications put to the solver so far, and how many it may get per function.
  unsigned SolverQuestions = 0;
  static constexpr unsigned MaxSolverQuestions = 4;
  /// infeasibleExit's own budget (only loops with more than one exit ask, once per exit).
  unsigned ExitQuestions = 0;
  static constexpr unsigned MaxExitQuestions = 32;
  /// The edges infeasibleExit found no thread takes; and, computed from them on first use,
  /// the blocks no thread reaches (ValueAnalysis::isDeadBlock).
  std::set<std::pair<BlockId, BlockId>> Infeasible;
  std::vector<bool> Dead;
  /// Header phis of the loop being finished that something in the loop reads.
  llvm::SmallPtrSet<const Expr *, 32> LivePhis;
};

} // namespace analyzer
} // namespace wsv
