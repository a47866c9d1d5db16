//===- SyncOpDecoder.h - shared pieces of the SyncOp decoders ---------------------===//
//
// decodeSyncOp() dispatches on the base name to one decoder per family (the files
// SyncOpDecode*.cpp). They share: a builder that fills a SyncOp, a cursor over the modifiers
// of an opcode, and the classification of the modifier words that many families use (scopes,
// semantics, state spaces, types).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/models/SyncOp.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace wsv {
namespace models {

/// Fills a SyncOp. Decoders name operands by their position in the instruction's operand
/// list (the guard is not counted).
class SyncOpBuilder {
public:
  SyncOpBuilder(const ptx::Instruction &I, SyncKind Kind) {
    Op.Inst = &I;
    Op.Kind = Kind;
  }
  SyncOp &op() { return Op; }
  SyncOp *operator->() { return &Op; }
  const ptx::Instruction &instruction() const { return *Op.Inst; }

  /// Names operand Index of the instruction. Roles are added in operand order.
  void role(OperandRole Role, unsigned Index) { addRole(Role, Index, SyncOp::Part::Whole); }
  /// Names the halves of a pair operand `d|p`.
  void pairRoles(unsigned Index, OperandRole First, OperandRole Second) {
    addRole(First, Index, SyncOp::Part::PairFirst);
    addRole(Second, Index, SyncOp::Part::PairSecond);
  }
  /// Names operands First, First+1, ... in turn; OperandRole::None skips one.
  void roles(unsigned First, std::initializer_list<OperandRole> Roles) {
    unsigned Index = First;
    for (OperandRole R : Roles) {
      if (R != OperandRole::None)
        role(R, Index);
      ++Index;
    }
  }
  SyncDecodeResult done() const { return SyncDecodeResult::decoded(Op); }

private:
  void addRole(OperandRole Role, unsigned Index, SyncOp::Part Of) {
    assert(Op.NumRoles < SyncOp::MaxRoles && "more named operands than a record holds");
    assert(Index < instruction().operands().size() && "naming an operand that is not there");
    Op.Roles[Op.NumRoles++] = {Role, static_cast<uint8_t>(Index), Of};
  }

  SyncOp Op;
};

/// The modifiers of an opcode, one at a time. Decoders take the words whose position is fixed
/// by the syntax (`mbarrier.arrive`, `cp.async.bulk.tensor.2d`) with take(), then classify the
/// rest in a loop.
class ModifierCursor {
public:
  explicit ModifierCursor(const ptx::Instruction &I)
      : It(I.modifiers().begin()), End(I.modifiers().end()) {}
  bool atEnd() const { return It == End; }
  llvm::StringRef peek() const { return atEnd() ? llvm::StringRef() : *It; }
  llvm::StringRef next() {
    if (atEnd())
      return {};
    llvm::StringRef M = *It;
    ++It;
    return M;
  }
  /// Consumes the next modifier if it is M.
  bool take(llvm::StringRef M) {
    if (atEnd() || *It != M)
      return false;
    ++It;
    return true;
  }

private:
  ptx::ModifierIterator It, End;
};

/// A shorthand for the unrecognized result of one family.
struct Reject {
  SyncFamily Family;
  SyncDecodeResult operator()(const char *Reason, llvm::StringRef Detail = {}) const {
    return SyncDecodeResult::unrecognized(Family, Reason, Detail);
  }
};

/// A modifier category of a family's syntax (`.sem`, `.scope`, ...): at most one per opcode.
template <typename T> struct ModifierSlot {
  std::optional<T> Value;
  llvm::StringRef Text;
  /// False when the category was already set: the opcode repeats it.
  bool set(T V, llvm::StringRef M) {
    if (Value)
      return false;
    Value = V;
    Text = M;
    return true;
  }
  bool has_value() const { return Value.has_value(); }
  explicit operator bool() const { return Value.has_value(); }
  const T &operator*() const { return *Value; }
  const T *operator->() const { return &*Value; }
  T valueOr(T Default) const { return Value ? *Value : Default; }
};

/// What a classifier made of one modifier.
enum class WordFit { Unknown, Taken, Repeated };

/// Puts M into Slot when Value says it belongs there.
template <typename T>
WordFit fit(ModifierSlot<T> &Slot, const std::optional<T> &Value, llvm::StringRef M) {
  if (!Value)
    return WordFit::Unknown;
  return Slot.set(*Value, M) ? WordFit::Taken : WordFit::Repeated;
}
/// A word that is present or not (`.sync`, `.aligned`, `.down`).
inline WordFit flag(ModifierSlot<bool> &Slot, llvm::StringRef M) {
  return Slot.set(true, M) ? WordFit::Taken : WordFit::Repeated;
}

/// Feeds the rest of C's modifiers to Classify, in order: the words after an instruction's
/// name may come in any order (ptxas takes them so), each at most once. Fails on the first
/// word Classify does not know or has seen.
template <typename ClassifyFn>
std::optional<SyncDecodeResult> scanWords(ModifierCursor &C, const Reject &Fail,
                                          ClassifyFn Classify) {
  while (!C.atEnd()) {
    llvm::StringRef M = C.next();
    switch (Classify(M)) {
    case WordFit::Taken:
      break;
    case WordFit::Unknown:
      return Fail("unknown modifier", M);
    case WordFit::Repeated:
      return Fail("repeated modifier", M);
    }
  }
  return std::nullopt;
}

// Words many families share.
std::optional<SyncScope> scopeWord(llvm::StringRef M);
std::optional<MemorySemantics> semanticsWord(llvm::StringRef M);
/// `shared` and `shared::cta` are SharedCta; `param::entry` and `param::func` are Param.
std::optional<StateSpace> spaceWord(llvm::StringRef M);
/// Bytes of a scalar type word (`b32` -> 4, `f16x2` -> 4, `pred` -> 0 with a value); none for
/// words that are not types.
std::optional<unsigned> typeWordBytes(llvm::StringRef M);
/// `v2`, `v4`, `v8` -> 2, 4, 8.
std::optional<unsigned> vectorWord(llvm::StringRef M);
/// `cta_group::1` / `cta_group::2` -> 1 / 2.
std::optional<uint8_t> ctaGroupWord(llvm::StringRef M);
/// The integer after a fixed prefix and before a fixed suffix: (`x16`, "x", "") -> 16.
std::optional<unsigned> numberIn(llvm::StringRef M, llvm::StringRef Prefix,
                                 llvm::StringRef Suffix = "");

// Operand shapes the decoders check.
bool isAddress(ptx::Operand Op);
bool isVector(ptx::Operand Op);
/// A register, symbol, sink or immediate: anything that is not an address, vector or list.
bool isScalar(ptx::Operand Op);
bool isSink(ptx::Operand Op);
bool isImmediate(ptx::Operand Op);

// The family decoders. Each is called with an instruction whose base name selects it and
// returns NotSync only for instructions of that base name that are no synchronization
// (ld.global, clusterlaunchcontrol.query_cancel, ...).
SyncDecodeResult decodeMbarrier(const ptx::Instruction &I);
/// cp.async.mbarrier.arrive, with C just after `cp.async.mbarrier`.
SyncDecodeResult decodeCpAsyncMbarrierArrive(const ptx::Instruction &I, ModifierCursor &C);
SyncDecodeResult decodeCp(const ptx::Instruction &I);
SyncDecodeResult decodeTcgen05(const ptx::Instruction &I);
SyncDecodeResult decodeWgmma(const ptx::Instruction &I);
SyncDecodeResult decodeBar(const ptx::Instruction &I);
SyncDecodeResult decodeBarrier(const ptx::Instruction &I);
SyncDecodeResult decodeElect(const ptx::Instruction &I);
SyncDecodeResult decodeFence(const ptx::Instruction &I);
SyncDecodeResult decodeMembar(const ptx::Instruction &I);
SyncDecodeResult decodeSetmaxnreg(const ptx::Instruction &I);
SyncDecodeResult decodeMapa(const ptx::Instruction &I);
SyncDecodeResult decodeClusterLaunchControl(const ptx::Instruction &I);
SyncDecodeResult decodeLd(const ptx::Instruction &I);
SyncDecodeResult decodeSt(const ptx::Instruction &I);
SyncDecodeResult decodeAtomOrRed(const ptx::Instruction &I);
SyncDecodeResult decodeMatrix(const ptx::Instruction &I);
SyncDecodeResult decodeThreadExit(const ptx::Instruction &I);

} // namespace models
} // namespace wsv
