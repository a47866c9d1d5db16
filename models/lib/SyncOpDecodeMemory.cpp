//===- SyncOpDecodeMemory.cpp - generic-proxy accesses that can touch shared memory --===//
//
// PTX ISA 9.0, "Data Movement and Conversion Instructions": ld, st, st.async, st.bulk,
// ldmatrix, stmatrix, and "Parallel Synchronization and Communication Instructions": atom,
// red, red.async. What matters for synchronization is whether an access can reach shared
// memory: `.shared{::cta,::cluster}` accesses do, and so may those with no state space
// (generic addresses); accesses to .global, .local, .param and .const are no synchronization
// and come back as NotSync without further checks.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject Fail{SyncFamily::MemoryAccess};

bool isSharedSpace(StateSpace S) {
  return S == StateSpace::SharedCta || S == StateSpace::SharedCluster;
}

/// The first state space among the modifiers, if any. Decides NotSync before validation,
/// so that the many forms of global and parameter accesses need no table here.
std::optional<StateSpace> firstSpace(const ptx::Instruction &I) {
  for (StringRef M : I.modifiers())
    if (auto S = spaceWord(M))
      return S;
  return std::nullopt;
}

enum AccessFlags : unsigned {
  LoadWords = 1,   ///< ld: cache ops ca/cg/cs/lu/cv, prefetch sizes, nc
  StoreWords = 2,  ///< st: cache ops wb/cg/cs/wt
  AtomicWords = 4, ///< atom/red: operations, noftz
};

/// The modifier categories of ld, st, atom and red.
struct AccessWords {
  ModifierSlot<MemorySemantics> Sem;
  ModifierSlot<SyncScope> Scope;
  ModifierSlot<StateSpace> Space;
  ModifierSlot<bool> CacheOp, L1Evict, L2Evict, CacheHint, Prefetch, NoFtz;
  ModifierSlot<unsigned> Vector, TypeBytes;
  ModifierSlot<ReductionOp> Op;
};

std::optional<ReductionOp> atomicOpWord(StringRef M) {
  return llvm::StringSwitch<std::optional<ReductionOp>>(M)
      .Case("and", ReductionOp::And)
      .Case("or", ReductionOp::Or)
      .Case("xor", ReductionOp::Xor)
      .Case("cas", ReductionOp::Cas)
      .Case("exch", ReductionOp::Exch)
      .Case("add", ReductionOp::Add)
      .Case("inc", ReductionOp::Inc)
      .Case("dec", ReductionOp::Dec)
      .Case("min", ReductionOp::Min)
      .Case("max", ReductionOp::Max)
      .Default(std::nullopt);
}

std::optional<SyncDecodeResult> scanAccessWords(ModifierCursor &C, unsigned Flags,
                                                AccessWords &W) {
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (auto Sem = semanticsWord(M))
      Fresh = W.Sem.set(*Sem, M);
    else if (auto Scope = scopeWord(M))
      Fresh = W.Scope.set(*Scope, M);
    else if (auto Space = spaceWord(M))
      Fresh = W.Space.set(*Space, M);
    else if (auto V = vectorWord(M))
      Fresh = W.Vector.set(*V, M);
    else if (auto Bytes = typeWordBytes(M))
      Fresh = W.TypeBytes.set(*Bytes, M);
    else if (M == "L2::cache_hint")
      Fresh = W.CacheHint.set(true, M);
    else if (M == "L1::evict_normal" || M == "L1::evict_unchanged" || M == "L1::evict_first" ||
             M == "L1::evict_last" || M == "L1::no_allocate")
      Fresh = W.L1Evict.set(true, M);
    else if (M == "L2::evict_normal" || M == "L2::evict_first" || M == "L2::evict_last")
      Fresh = W.L2Evict.set(true, M);
    else if ((Flags & LoadWords) && (M == "L2::64B" || M == "L2::128B" || M == "L2::256B"))
      Fresh = W.Prefetch.set(true, M);
    else if ((Flags & LoadWords) &&
             (M == "ca" || M == "cg" || M == "cs" || M == "lu" || M == "cv"))
      Fresh = W.CacheOp.set(true, M);
    else if ((Flags & StoreWords) &&
             (M == "wb" || M == "cg" || M == "cs" || M == "wt"))
      Fresh = W.CacheOp.set(true, M);
    else if (auto Op = atomicOpWord(M); Op && (Flags & AtomicWords))
      Fresh = W.Op.set(*Op, M);
    else if (M == "noftz" && (Flags & AtomicWords))
      Fresh = W.NoFtz.set(true, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!W.TypeBytes)
    return Fail("a memory access needs a type such as '.b32'");
  if (W.Space && !isSharedSpace(*W.Space))
    return Fail("not a shared-memory access", W.Space.Text);
  return std::nullopt;
}

/// Semantics and scope go together: `.relaxed`/`.acquire`/`.release` need a scope, `.weak`
/// and `.volatile` take none. Allowed says which strong semantics the instruction has.
std::optional<SyncDecodeResult> checkOrdering(const AccessWords &W,
                                              std::initializer_list<MemorySemantics> Allowed,
                                              bool ScopeRequired) {
  if (W.Sem && *W.Sem != MemorySemantics::Weak && *W.Sem != MemorySemantics::Volatile) {
    bool Ok = false;
    for (MemorySemantics S : Allowed)
      Ok |= *W.Sem == S;
    if (!Ok)
      return Fail("these memory semantics are not defined for this instruction", W.Sem.Text);
    if (ScopeRequired && !W.Scope)
      return Fail("strong memory semantics need a scope", W.Sem.Text);
  } else if (W.Scope && ScopeRequired) {
    return Fail("a scope goes with '.relaxed', '.acquire' or '.release'", W.Scope.Text);
  }
  return std::nullopt;
}

void setAccess(SyncOpBuilder &B, const AccessWords &W, MemorySemantics DefaultSem) {
  B->Space = W.Space.valueOr(StateSpace::Generic);
  B->Sem = W.Sem.valueOr(DefaultSem);
  B->Scope = W.Scope.valueOr(SyncScope::None);
  B->CacheHint = W.CacheHint.has_value();
  B->AccessBytes = static_cast<uint16_t>(*W.TypeBytes * W.Vector.valueOr(1));
}

bool isValue(ptx::Operand Op) { return isScalar(Op) || isVector(Op); }

/// ::= st.async{.weak}{.shared::cluster}{.mbarrier::complete_tx::bytes}{.vec}.type
///         [a], b, [mbar]
SyncDecodeResult decodeStAsync(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<bool> Completion;
  ModifierSlot<unsigned> Vector, TypeBytes;
  ModifierSlot<MemorySemantics> Sem;
  ModifierSlot<SyncScope> Scope;
  ModifierSlot<StateSpace> Space;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (M == "mbarrier::complete_tx::bytes")
      Fresh = Completion.set(true, M);
    else if (auto V = vectorWord(M))
      Fresh = Vector.set(*V, M);
    else if (auto Bytes = typeWordBytes(M))
      Fresh = TypeBytes.set(*Bytes, M);
    else if (auto S = semanticsWord(M))
      Fresh = Sem.set(*S, M);
    else if (auto S = scopeWord(M))
      Fresh = Scope.set(*S, M);
    else if (auto S = spaceWord(M))
      Fresh = Space.set(*S, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (Sem && *Sem != MemorySemantics::Weak)
    return Fail("st.async to shared::cluster is '.weak'", Sem.Text);
  if (Scope && *Scope != SyncScope::Cluster)
    return Fail("st.async to shared::cluster has the '.cluster' scope", Scope.Text);
  if (Space && *Space != StateSpace::SharedCluster)
    return Fail("st.async writes '.shared::cluster' or '.global'", Space.Text);
  if (!TypeBytes || *TypeBytes < 4 || (Vector && *Vector > 4))
    return Fail("st.async stores 32- or 64-bit values, up to '.v4'", TypeBytes.Text);
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 3 || !isAddress(Ops[0]) || !isValue(Ops[1]) || !isAddress(Ops[2]))
    return Fail("st.async takes [a], b, [mbar]");
  SyncOpBuilder B(I, SyncKind::StAsync);
  B->Sem = MemorySemantics::Weak;
  B->Scope = SyncScope::Cluster;
  B->Space = Space.valueOr(StateSpace::Generic);
  B->DstSpace = B->Space;
  B->Completion = CompletionMechanism::MbarrierCompleteTx;
  B->AccessBytes = static_cast<uint16_t>(*TypeBytes * Vector.valueOr(1));
  B.roles(0, {OperandRole::Dst, OperandRole::Data, OperandRole::Barrier});
  return B.done();
}

/// ::= red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type
///         [a], b, [mbar]
SyncDecodeResult decodeRedAsync(const ptx::Instruction &I, ModifierCursor &C) {
  AccessWords W;
  ModifierSlot<bool> Completion;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (M == "mbarrier::complete_tx::bytes")
      Fresh = Completion.set(true, M);
    else if (auto S = semanticsWord(M))
      Fresh = W.Sem.set(*S, M);
    else if (auto S = scopeWord(M))
      Fresh = W.Scope.set(*S, M);
    else if (auto S = spaceWord(M))
      Fresh = W.Space.set(*S, M);
    else if (auto Op = atomicOpWord(M))
      Fresh = W.Op.set(*Op, M);
    else if (auto Bytes = typeWordBytes(M))
      Fresh = W.TypeBytes.set(*Bytes, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!W.Sem || *W.Sem != MemorySemantics::Relaxed || !W.Scope ||
      *W.Scope != SyncScope::Cluster)
    return Fail("red.async to shared::cluster is '.relaxed.cluster'");
  if (W.Space && *W.Space != StateSpace::SharedCluster)
    return Fail("red.async writes '.shared::cluster'", W.Space.Text);
  if (!Completion)
    return Fail("red.async completes with '.mbarrier::complete_tx::bytes'");
  if (!W.Op || *W.Op == ReductionOp::Cas || *W.Op == ReductionOp::Exch || !W.TypeBytes)
    return Fail("red.async needs a reduction and a type, such as '.add.u32'");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 3 || !isAddress(Ops[0]) || !isScalar(Ops[1]) || !isAddress(Ops[2]))
    return Fail("red.async takes [a], b, [mbar]");
  SyncOpBuilder B(I, SyncKind::RedAsync);
  B->Sem = MemorySemantics::Relaxed;
  B->Scope = SyncScope::Cluster;
  B->Space = W.Space.valueOr(StateSpace::Generic);
  B->DstSpace = B->Space;
  B->Completion = CompletionMechanism::MbarrierCompleteTx;
  B->Reduction = *W.Op;
  B->AccessBytes = static_cast<uint16_t>(*W.TypeBytes);
  B.roles(0, {OperandRole::Dst, OperandRole::Data, OperandRole::Barrier});
  return B.done();
}

/// ::= st.bulk{.weak}{.shared::cta} [a], size, initval
SyncDecodeResult decodeStBulk(const ptx::Instruction &I, ModifierCursor &C) {
  C.take("weak");
  bool SharedCta = C.take("shared::cta");
  if (!C.atEnd())
    return Fail("unknown modifier", C.peek());
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 3 || !isAddress(Ops[0]) || !isScalar(Ops[1]) || !isImmediate(Ops[2]))
    return Fail("st.bulk takes [a], size, initval");
  SyncOpBuilder B(I, SyncKind::SharedStore);
  B->Space = SharedCta ? StateSpace::SharedCta : StateSpace::Generic;
  if (!SharedCta)
    B->Kind = SyncKind::GenericStore;
  B->Sem = MemorySemantics::Weak;
  B.roles(0, {OperandRole::Address, OperandRole::Size, OperandRole::Data});
  return B.done();
}

} // namespace

/// ::= ld{.weak,.volatile,.relaxed.scope,.acquire.scope}{.ss}{.cop}{.eviction}{.L2::cache_hint}
///         {.L2::prefetch_size}{.vec}.type d, [a]{, cache-policy}
SyncDecodeResult wsv::models::decodeLd(const ptx::Instruction &I) {
  std::optional<StateSpace> Space = firstSpace(I);
  if (Space && !isSharedSpace(*Space))
    return SyncDecodeResult::notSync();
  ModifierCursor C(I);
  AccessWords W;
  if (auto R = scanAccessWords(C, LoadWords, W))
    return *R;
  if (auto R = checkOrdering(W, {MemorySemantics::Relaxed, MemorySemantics::Acquire}, true))
    return *R;
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2u + (W.CacheHint ? 1 : 0) || !isValue(Ops[0]) || !isAddress(Ops[1]))
    return Fail("ld takes d, [a]{, cache-policy}");
  SyncOpBuilder B(I, Space ? SyncKind::SharedLoad : SyncKind::GenericLoad);
  setAccess(B, W, MemorySemantics::Weak);
  B.roles(0, {OperandRole::Data, OperandRole::Address});
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, 2);
  return B.done();
}

/// ::= st{.weak,.volatile,.relaxed.scope,.release.scope}{.ss}{.cop}{.eviction}
///         {.L2::cache_hint}{.vec}.type [a], b{, cache-policy}
/// and st.async, st.bulk.
SyncDecodeResult wsv::models::decodeSt(const ptx::Instruction &I) {
  std::optional<StateSpace> Space = firstSpace(I);
  if (Space && !isSharedSpace(*Space))
    return SyncDecodeResult::notSync();
  ModifierCursor C(I);
  if (C.take("async"))
    return decodeStAsync(I, C);
  if (C.take("bulk"))
    return decodeStBulk(I, C);
  AccessWords W;
  if (auto R = scanAccessWords(C, StoreWords, W))
    return *R;
  if (auto R = checkOrdering(W, {MemorySemantics::Relaxed, MemorySemantics::Release}, true))
    return *R;
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2u + (W.CacheHint ? 1 : 0) || !isAddress(Ops[0]) || !isValue(Ops[1]))
    return Fail("st takes [a], b{, cache-policy}");
  SyncOpBuilder B(I, Space ? SyncKind::SharedStore : SyncKind::GenericStore);
  setAccess(B, W, MemorySemantics::Weak);
  B.roles(0, {OperandRole::Address, OperandRole::Data});
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, 2);
  return B.done();
}

/// ::= atom{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vec}.type d, [a], b{, c}
///         {, cache-policy}
/// ::= red{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vec}.type [a], b{, cache-policy}
/// and red.async. Both default to .relaxed at .gpu scope.
SyncDecodeResult wsv::models::decodeAtomOrRed(const ptx::Instruction &I) {
  std::optional<StateSpace> Space = firstSpace(I);
  if (Space && !isSharedSpace(*Space))
    return SyncDecodeResult::notSync();
  bool Atom = I.baseName() == "atom";
  ModifierCursor C(I);
  if (!Atom && C.take("async"))
    return decodeRedAsync(I, C);
  AccessWords W;
  if (auto R = scanAccessWords(C, AtomicWords, W))
    return *R;
  if (!W.Op)
    return Fail(Atom ? "atom needs an operation such as '.add'"
                     : "red needs an operation such as '.add'");
  if (!Atom && (*W.Op == ReductionOp::Cas || *W.Op == ReductionOp::Exch))
    return Fail("red has no '.cas' or '.exch'", W.Op.Text);
  if (W.CacheOp || W.L1Evict || W.L2Evict || W.Prefetch)
    return Fail("atomics take no cache operator or eviction priority");
  if (W.Sem && (*W.Sem == MemorySemantics::Weak || *W.Sem == MemorySemantics::Volatile ||
                *W.Sem == MemorySemantics::Sc || *W.Sem == MemorySemantics::Mmio ||
                (!Atom && (*W.Sem == MemorySemantics::Acquire ||
                           *W.Sem == MemorySemantics::AcqRel))))
    return Fail("these memory semantics are not defined for this instruction", W.Sem.Text);
  if (W.Vector && Space)
    return Fail("vector atomics are '.global' only", W.Vector.Text);

  ptx::OperandRange Ops = I.operands();
  unsigned Hint = W.CacheHint ? 1 : 0;
  unsigned Min = (Atom ? 3 : 2) + Hint;
  bool TwoValues = Atom && *W.Op == ReductionOp::Cas;
  unsigned Want = Min + (TwoValues ? 1 : 0);
  unsigned Addr = Atom ? 1 : 0;
  if (Ops.size() != Want || !isAddress(Ops[Addr]) || !isValue(Ops[Addr + 1]) ||
      (Atom && !isValue(Ops[0])))
    return Fail(Atom ? "atom takes d, [a], b{, c}{, cache-policy}"
                     : "red takes [a], b{, cache-policy}");
  SyncOpBuilder B(I, Space ? SyncKind::SharedAtomic : SyncKind::GenericAtomic);
  setAccess(B, W, MemorySemantics::Relaxed);
  if (!W.Scope)
    B->Scope = SyncScope::Gpu;
  B->Reduction = *W.Op;
  if (Atom)
    B.role(OperandRole::Result, 0);
  B.roles(Addr, {OperandRole::Address, OperandRole::Data});
  unsigned Next = Addr + 2;
  if (TwoValues)
    B.role(OperandRole::Data2, Next++);
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, Next++);
  return B.done();
}

/// ::= ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]
/// ::= ldmatrix.sync.aligned.m8n16.num{.ss}.dst_fmt.src_fmt r, [p]
/// ::= ldmatrix.sync.aligned.m16n16.num.trans{.ss}.dst_fmt.src_fmt r, [p]
/// ::= stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r
/// .shape = {.m8n8, .m16n16, .m8n16} for ldmatrix, {.m8n8, .m16n8} for stmatrix;
/// .num = {.x1, .x2, .x4}; .dst_fmt.src_fmt = .b8x16.{b6x16_p32, b4x16_p64}, in that order.
SyncDecodeResult wsv::models::decodeMatrix(const ptx::Instruction &I) {
  bool Load = I.baseName() == "ldmatrix";
  ModifierCursor C(I);
  ModifierSlot<bool> Sync, Aligned, Trans, DstFmt;
  ModifierSlot<StringRef> Shape, Type, SrcFmt;
  ModifierSlot<unsigned> Repeat;
  ModifierSlot<StateSpace> Space;
  unsigned Word = 0, DstFmtAt = 0, SrcFmtAt = 0;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        ++Word;
        if (M == "sync")
          return flag(Sync, M);
        if (M == "aligned")
          return flag(Aligned, M);
        if (M == "trans")
          return flag(Trans, M);
        if (M == "b8x16" && Load) {
          DstFmtAt = Word;
          return flag(DstFmt, M);
        }
        if ((M == "b6x16_p32" || M == "b4x16_p64") && Load) {
          SrcFmtAt = Word;
          return fit(SrcFmt, std::optional(M), M);
        }
        if (M == "b16" || M == "b8")
          return fit(Type, std::optional(M), M);
        if (auto S = spaceWord(M))
          return fit(Space, S, M);
        if (auto N = numberIn(M, "x"))
          return fit(Repeat, N, M);
        if (M.starts_with("m"))
          return fit(Shape, std::optional(M), M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!Sync || !Aligned)
    return Fail("ldmatrix and stmatrix are '.sync.aligned'");
  bool Known = Shape && (*Shape == "m8n8" || (Load ? (*Shape == "m16n16" || *Shape == "m8n16")
                                                   : *Shape == "m16n8"));
  if (!Known)
    return Fail("not a shape of this instruction", Shape.Text);
  if (!Repeat || (*Repeat != 1 && *Repeat != 2 && *Repeat != 4))
    return Fail("the matrix count is '.x1', '.x2' or '.x4'", Repeat.Text);
  if (Space && *Space != StateSpace::SharedCta)
    return Fail("ldmatrix and stmatrix address '.shared{::cta}'", Space.Text);
  if (DstFmt.has_value() != SrcFmt.has_value() || (DstFmt && SrcFmtAt != DstFmtAt + 1))
    return Fail("the format is '.b8x16' followed by '.b6x16_p32' or '.b4x16_p64'");
  if (DstFmt.has_value() == Type.has_value())
    return Fail("the element type is '.b16' or '.b8', or a '.b8x16' format");

  ptx::OperandRange Ops = I.operands();
  unsigned Addr = Load ? 1 : 0;
  if (Ops.size() != 2 || !isAddress(Ops[Addr]) || !isValue(Ops[1 - Addr]))
    return Fail(Load ? "ldmatrix takes r, [p]" : "stmatrix takes [p], r");
  SyncOpBuilder B(I, Load ? SyncKind::Ldmatrix : SyncKind::Stmatrix);
  B->Aligned = true;
  B->Space = Space.valueOr(StateSpace::Generic);
  B->Transposed = Trans.has_value();
  B->Repeat = static_cast<uint8_t>(*Repeat);
  // The shape is one of the few checked above, so both numbers parse.
  std::optional<unsigned> M = numberIn(Shape->split('n').first, "m");
  std::optional<unsigned> N = numberIn(Shape->split('n').second, "");
  B->ShapeM = static_cast<uint16_t>(M.value_or(0));
  B->ShapeN = static_cast<uint16_t>(N.value_or(0));
  if (Load)
    B.roles(0, {OperandRole::Data, OperandRole::Address});
  else
    B.roles(0, {OperandRole::Address, OperandRole::Data});
  return B.done();
}
