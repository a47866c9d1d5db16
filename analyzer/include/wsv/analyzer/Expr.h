//===- Expr.h - symbolic values: a hash-consed expression DAG ---------------------===//
//
// Every value the analyzer reasons about is an Expr: a node of a DAG over constants, special
// registers (%tid.x, %ctaid.x, %cluster_ctarank, ...), kernel parameters, symbol addresses,
// loop iteration numbers, and opaque leaves (a phi the analysis could not close, an elect.sync
// result, a load, or a value it does not model, each with the reason). Nodes live in an
// ExprContext's allocator and are hash-consed: two structurally equal expressions are the same
// pointer, so equality is pointer comparison.
//
// Values are fixed-width bit vectors (1 to 64 bits) with PTX's wrap-around arithmetic; width 1
// is a predicate. The builders of ExprContext (add, mul, eq, ...) simplify as they build:
// constants fold, sums and constant multiples are kept in a canonical linear form (so
// (x + 1) + 2 is x + 3 and (tid / 32) * 32 + tid % 32 is tid), shifts by constants become
// multiplications and divisions, masks with low bits become remainders, comparisons take a
// canonical shape (x < c, c <= x, x == c), and unsigned ranges decide what they can
// (tid.x < 2048 is true). A few node kinds are therefore never built: subtraction is
// x + y * -1, x != y is not(x == y), x > y is y < x.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace wsv {
namespace analyzer {

enum class ExprKind : uint8_t {
  // Leaves.
  Constant,     ///< Payload: the value, zero-extended
  SpecialReg,   ///< Payload: a SpecialRegister
  Param,        ///< a kernel parameter loaded with ld.param: Name, Payload = byte offset
  Symbol,       ///< the address of a variable or function: Name, Payload = a SymbolSpace
  IterationVar, ///< the iteration number of a loop, from 0: Payload = loop index
  Phi,          ///< a join the analysis did not resolve: Name = register, Site/Payload = where
  Elect,        ///< elect.sync's predicate: true in one lane of each warp that executes it
  Load,         ///< a value loaded from memory at one instruction: Ops[0] = the address
  Opaque,       ///< a value the analysis does not model: Name = the reason
  // Unary.
  ZExt,
  SExt,
  Trunc,
  Not, ///< bitwise; logical for predicates
  // Binary.
  Add,
  Mul,
  UDiv,
  SDiv,
  URem,
  SRem,
  AShr, ///< arithmetic shift right (logical shifts by constants are UDiv and Mul)
  Shl,  ///< only with a non-constant shift amount
  LShr, ///< only with a non-constant shift amount
  And,
  Or,
  Xor,
  UMin,
  UMax,
  SMin,
  SMax,
  MulHiU, ///< the high half of the unsigned double-width product (mul.hi.u*)
  MapA, ///< mapa: Ops[0] (a shared::cta address) in the CTA of rank Ops[1] of the cluster
  // Comparisons (width 1).
  Eq,
  ULt,
  ULe,
  SLt,
  SLe,
  // Ternary.
  Select, ///< Ops[0] ? Ops[1] : Ops[2]
};

const char *toString(ExprKind Kind);

/// The special registers the thread-set evaluator and the ranges know; others are Opaque.
enum class SpecialRegister : uint8_t {
  TidX, TidY, TidZ,
  NtidX, NtidY, NtidZ,
  LaneId,
  WarpId, ///< not stable: a warp can migrate, so roles should come from %tid / 32
  NWarpId,
  CtaidX, CtaidY, CtaidZ,
  NctaidX, NctaidY, NctaidZ,
  ClusterCtaRank,
  ClusterNctaRank,
  ClusteridX, ClusteridY, ClusteridZ,
  NclusteridX, NclusteridY, NclusteridZ,
  ClusterCtaidX, ClusterCtaidY, ClusterCtaidZ,
  ClusterNctaidX, ClusterNctaidY, ClusterNctaidZ,
};

/// `%tid.x` -> TidX; std::nullopt for special registers wsv does not model (%clock, %smid).
std::optional<SpecialRegister> parseSpecialRegister(llvm::StringRef Name);
const char *toString(SpecialRegister R);
/// Same in every thread of a CTA (%ctaid, %nctaid, %cluster_ctarank, %ntid, ...).
bool isCtaUniform(SpecialRegister R);

/// The state space a Symbol's address is in.
enum class SymbolSpace : uint8_t { Shared, Global, Const, Local, Param, Function, Generic };
const char *toString(SymbolSpace S);

/// An inclusive range of unsigned values.
struct URange {
  uint64_t Lo = 0;
  uint64_t Hi = 0;
  bool contains(uint64_t V) const { return Lo <= V && V <= Hi; }
};

struct LinearForm;

class Expr {
public:
  ExprKind kind() const { return Kind; }
  bool is(ExprKind K) const { return Kind == K; }
  /// Bits, 1 to 64.
  unsigned width() const { return Width; }
  /// Creation order within the context: canonical operand order sorts by it.
  unsigned id() const { return Id; }
  llvm::ArrayRef<const Expr *> ops() const { return {Ops, NumOps}; }
  const Expr *op(unsigned I) const { return Ops[I]; }

  bool isLeaf() const { return Kind <= ExprKind::Opaque; }
  bool isConstant() const { return Kind == ExprKind::Constant; }
  bool isConstant(uint64_t V) const { return isConstant() && Payload == V; }
  bool isTrue() const { return Width == 1 && isConstant(1); }
  bool isFalse() const { return Width == 1 && isConstant(0); }
  bool isComparison() const { return Kind >= ExprKind::Eq && Kind <= ExprKind::SLe; }

  /// Constant: the value (zero-extended); others: the payload described at ExprKind.
  uint64_t payload() const { return Payload; }
  /// Constant value read as signed.
  int64_t signedValue() const;
  SpecialRegister specialRegister() const { return static_cast<SpecialRegister>(Payload); }
  SymbolSpace symbolSpace() const { return static_cast<SymbolSpace>(Payload); }
  /// Param / Symbol: the PTX name; Phi: the register; Elect / Load / Opaque: a description.
  llvm::StringRef name() const { return Name; }
  /// What makes otherwise equal opaque leaves distinct (the instruction that produced them).
  const void *site() const { return Site; }

  /// Unsigned values this expression can take (computed when it is built).
  URange range() const { return Range; }
  /// Whether the expression mentions a leaf for which Pred is true.
  bool mentions(const std::function<bool(const Expr *)> &Pred) const;

  /// Prints infix, e.g. `%tid.x / 32 == 1`, `(s + 1) % 4`. Hook may print a leaf itself
  /// (and return true), so callers can name loop counters and parameters their own way.
  void print(llvm::raw_ostream &OS,
             const std::function<bool(const Expr *, llvm::raw_ostream &)> &Hook = nullptr) const;
  std::string str() const;

private:
  friend class ExprContext;
  Expr() = default;

  const Expr *const *Ops = nullptr;
  const void *Site = nullptr;
  llvm::StringRef Name;
  uint64_t Payload = 0;
  URange Range;
  unsigned Id = 0;
  uint16_t NumOps = 0;
  uint8_t Width = 0;
  ExprKind Kind = ExprKind::Constant;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &OS, const Expr &E) {
  E.print(OS);
  return OS;
}

/// Owns expressions and builds them simplified. Not thread-safe; one per analysis.
class ExprContext {
public:
  ExprContext();
  ExprContext(const ExprContext &) = delete;
  ExprContext &operator=(const ExprContext &) = delete;

  static uint64_t mask(unsigned Width) { return Width >= 64 ? ~0ull : ((1ull << Width) - 1); }

  //===- Leaves -------------------------------------------------------------------===//
  const Expr *constant(uint64_t Value, unsigned Width);
  const Expr *boolean(bool Value) { return constant(Value ? 1 : 0, 1); }
  const Expr *specialRegister(SpecialRegister R);
  const Expr *param(llvm::StringRef Name, uint64_t Offset, unsigned Width);
  const Expr *symbol(llvm::StringRef Name, SymbolSpace Space, unsigned Width);
  const Expr *iterationVar(unsigned Loop);
  /// A phi leaf for Register at a join; (Site, Payload) identify the join and the register.
  const Expr *phi(llvm::StringRef Register, const void *Site, uint64_t Payload, unsigned Width);
  /// elect.sync's predicate at Site; Mask is the membermask operand's value.
  const Expr *elect(const void *Site, const Expr *Mask, llvm::StringRef Description);
  const Expr *load(const void *Site, const Expr *Address, unsigned Width,
                   llvm::StringRef Description);
  /// A value the analysis does not model, with the reason; distinct per (Site, Payload).
  const Expr *opaque(llvm::StringRef Reason, const void *Site, uint64_t Payload, unsigned Width);

  //===- Arithmetic (operands of equal width) -------------------------------------===//
  const Expr *add(const Expr *A, const Expr *B);
  const Expr *sub(const Expr *A, const Expr *B);
  const Expr *neg(const Expr *A);
  const Expr *mul(const Expr *A, const Expr *B);
  const Expr *udiv(const Expr *A, const Expr *B);
  const Expr *sdiv(const Expr *A, const Expr *B);
  const Expr *urem(const Expr *A, const Expr *B);
  const Expr *srem(const Expr *A, const Expr *B);
  const Expr *shl(const Expr *A, const Expr *B);
  const Expr *lshr(const Expr *A, const Expr *B);
  const Expr *ashr(const Expr *A, const Expr *B);
  const Expr *bitAnd(const Expr *A, const Expr *B);
  const Expr *bitOr(const Expr *A, const Expr *B);
  const Expr *bitXor(const Expr *A, const Expr *B);
  const Expr *bitNot(const Expr *A);
  const Expr *umin(const Expr *A, const Expr *B);
  const Expr *umax(const Expr *A, const Expr *B);
  const Expr *smin(const Expr *A, const Expr *B);
  const Expr *smax(const Expr *A, const Expr *B);
  const Expr *mapa(const Expr *Address, const Expr *Rank);
  /// mul.hi.u: the high Width bits of the 2*Width-bit product. Compilers divide by constants
  /// with it: (x mulhi M) / 2^s is rewritten to x / d when M is d's magic number.
  const Expr *mulhiu(const Expr *A, const Expr *B);
  /// Width changes; a no-op when the width already matches.
  const Expr *zext(const Expr *A, unsigned Width);
  const Expr *sext(const Expr *A, unsigned Width);
  const Expr *trunc(const Expr *A, unsigned Width);
  /// zext or trunc to Width (what a mov between register widths does).
  const Expr *resize(const Expr *A, unsigned Width);

  //===- Predicates (width 1) ------------------------------------------------------===//
  const Expr *eq(const Expr *A, const Expr *B);
  const Expr *ne(const Expr *A, const Expr *B);
  const Expr *ult(const Expr *A, const Expr *B);
  const Expr *ule(const Expr *A, const Expr *B);
  const Expr *ugt(const Expr *A, const Expr *B) { return ult(B, A); }
  const Expr *uge(const Expr *A, const Expr *B) { return ule(B, A); }
  const Expr *slt(const Expr *A, const Expr *B);
  const Expr *sle(const Expr *A, const Expr *B);
  const Expr *sgt(const Expr *A, const Expr *B) { return slt(B, A); }
  const Expr *sge(const Expr *A, const Expr *B) { return sle(B, A); }
  const Expr *logicalAnd(const Expr *A, const Expr *B) { return bitAnd(A, B); }
  const Expr *logicalOr(const Expr *A, const Expr *B) { return bitOr(A, B); }
  const Expr *logicalNot(const Expr *A) { return bitNot(A); }
  const Expr *implies(const Expr *A, const Expr *B) { return bitOr(bitNot(A), B); }
  /// Cond ? A : B (Cond has width 1; A and B equal widths).
  const Expr *select(const Expr *Cond, const Expr *A, const Expr *B);

  //===- Whole-expression operations ------------------------------------------------===//
  /// Rebuilds E bottom-up. Replace is asked about every node before its operands; a non-null
  /// answer replaces the node (its operands are then not visited). Rebuilt nodes go through
  /// the simplifying builders. Shared subexpressions are visited once.
  const Expr *rewrite(const Expr *E, const std::function<const Expr *(const Expr *)> &Replace);
  /// Replaces every occurrence of From (any node, not only leaves) by To.
  const Expr *substitute(const Expr *E, const Expr *From, const Expr *To);
  /// Rebuilds one node with new operands through the simplifying builders.
  const Expr *rebuild(const Expr *E, llvm::ArrayRef<const Expr *> NewOps);

  /// Evaluates E where Leaf gives every leaf's value (std::nullopt: unknown). Division by
  /// zero gives std::nullopt (PTX leaves the result unspecified).
  static std::optional<uint64_t>
  evaluate(const Expr *E, llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf);

  /// The value of node N (not a leaf) given its operands' values; std::nullopt where PTX
  /// leaves the result unspecified (division by zero) or there is no number (mapa).
  static std::optional<uint64_t> apply(const Expr *N, llvm::ArrayRef<uint64_t> Operands);

  /// Interns a string for the life of the context.
  llvm::StringRef save(llvm::StringRef S);
  size_t size() const { return NextId; }

private:
  friend const Expr *buildLinear(ExprContext &Ctx, const LinearForm &L);
  friend const Expr *buildDisjunction(ExprContext &Ctx,
                                      llvm::SmallVectorImpl<const Expr *> &Terms);
  const Expr *make(ExprKind Kind, unsigned Width, llvm::ArrayRef<const Expr *> Ops,
                   uint64_t Payload = 0, llvm::StringRef Name = {}, const void *Site = nullptr);
  URange computeRange(ExprKind Kind, unsigned Width, llvm::ArrayRef<const Expr *> Ops,
                      uint64_t Payload) const;

  llvm::BumpPtrAllocator Alloc;
  /// Interned strings, copied into Alloc (by this code, so sanitizer builds see one
  /// allocator discipline).
  llvm::DenseSet<llvm::StringRef> Strings;
  /// Hash-consing: nodes by kind, width, payload, site, name (interned, so by pointer) and
  /// operands.
  struct NodeKey {
    ExprKind Kind;
    unsigned Width;
    uint64_t Payload;
    const void *Site;
    const char *Name;
    llvm::ArrayRef<const Expr *> Ops;
  };
  struct NodeInfo {
    static Expr *getEmptyKey() { return llvm::DenseMapInfo<Expr *>::getEmptyKey(); }
    static Expr *getTombstoneKey() { return llvm::DenseMapInfo<Expr *>::getTombstoneKey(); }
    static unsigned getHashValue(const NodeKey &K);
    static unsigned getHashValue(const Expr *E);
    static bool isEqual(const Expr *A, const Expr *B) { return A == B; }
    static bool isEqual(const NodeKey &K, const Expr *E);
  };
  llvm::DenseSet<Expr *, NodeInfo> Nodes;
  /// Addresses of strings already interned: names handed back in are not hashed again.
  llvm::DenseSet<std::pair<const char *, size_t>> Interned;
  unsigned NextId = 0;
};

/// Whether the expression depends on the thread within a CTA (%tid, %laneid, %warpid, elect).
bool isThreadDependent(const Expr *E);

/// Conjuncts of a predicate (`a && b && c` -> a, b, c); none for true or nullptr.
void conjuncts(const Expr *P, llvm::SmallVectorImpl<const Expr *> &Out);

/// Whether Node occurs in E (as E or any subexpression).
bool containsNode(const Expr *E, const Expr *Node);

/// An expression flattened for evaluating it many times over different leaf values (the
/// solver's sampling): its nodes in an order with operands first, so that one pass over an
/// array computes them all, where ExprContext::evaluate builds a memo for every call. Not
/// for use by two threads at once (it keeps its scratch values).
class FlatExpr {
public:
  explicit FlatExpr(const Expr *E);
  /// The leaves evaluate() reads, in the order of its values.
  llvm::ArrayRef<const Expr *> leaves() const { return Leaves; }
  /// The value of the expression where leaves()[I] has the value Values[I] (std::nullopt:
  /// unknown): the same as ExprContext::evaluate with that leaf function.
  std::optional<uint64_t> evaluate(llvm::ArrayRef<std::optional<uint64_t>> Values) const;

private:
  struct Node {
    const Expr *E;
    uint32_t Ops[3]; ///< slots of the operands: leaves first, then nodes in order
  };
  std::vector<const Expr *> Leaves;
  std::vector<Node> Nodes;
  mutable std::vector<uint64_t> Value; ///< per slot
  mutable std::vector<uint8_t> Known;  ///< per slot
};

/// Whether E(X + Q*S) == E(X) for every S >= 0, shown from E's form alone (sums, products
/// by constants, divisions and residues of small linear forms of X, bit masks, choices on
/// X == k that X >= MinX decides), for X a leaf whose values stay in MinX .. 2^26 (an
/// iteration number of the periodicity lemmas, from a threshold on); false when not shown.
/// ExprShift.cpp gives the rules.
bool shiftInvariant(const Expr *E, const Expr *X, uint64_t Q, uint64_t MinX = 0);

} // namespace analyzer
} // namespace wsv
