//===- SyncOpDecodeCopy.cpp - cp.async.bulk{.tensor}, cp.reduce.async.bulk, cp.async --===//
//
// PTX ISA 9.0, "Data Movement and Conversion Instructions": cp.async.bulk,
// cp.reduce.async.bulk, cp.async.bulk.prefetch, cp.async.bulk.tensor,
// cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor, cp.async.bulk.commit_group,
// cp.async.bulk.wait_group, cp.async, cp.async.commit_group and
// cp.async.wait_group / cp.async.wait_all. cp.async.mbarrier.arrive is decoded with the
// mbarrier instructions.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject FailBulk{SyncFamily::BulkCopy};
const Reject FailAsync{SyncFamily::AsyncCopy};

std::optional<ReductionOp> reductionWord(StringRef M) {
  return llvm::StringSwitch<std::optional<ReductionOp>>(M)
      .Case("add", ReductionOp::Add)
      .Case("min", ReductionOp::Min)
      .Case("max", ReductionOp::Max)
      .Case("inc", ReductionOp::Inc)
      .Case("dec", ReductionOp::Dec)
      .Case("and", ReductionOp::And)
      .Case("or", ReductionOp::Or)
      .Case("xor", ReductionOp::Xor)
      .Default(std::nullopt);
}

std::optional<TensorLoadMode> loadModeWord(StringRef M) {
  return llvm::StringSwitch<std::optional<TensorLoadMode>>(M)
      .Case("tile", TensorLoadMode::Tile)
      .Case("tile::gather4", TensorLoadMode::TileGather4)
      .Case("tile::scatter4", TensorLoadMode::TileScatter4)
      .Case("im2col", TensorLoadMode::Im2col)
      .Case("im2col::w", TensorLoadMode::Im2colW)
      .Case("im2col::w::128", TensorLoadMode::Im2colW128)
      .Case("im2col_no_offs", TensorLoadMode::Im2colNoOffs)
      .Default(std::nullopt);
}

bool isIm2colWithInfo(TensorLoadMode M) {
  return M == TensorLoadMode::Im2col || M == TensorLoadMode::Im2colW ||
         M == TensorLoadMode::Im2colW128;
}

/// The modifier categories of the bulk-copy syntax blocks after `cp{.reduce}.async.bulk{.tensor}`.
/// State spaces are positional: the first is the destination, the second the source.
struct BulkWords {
  ModifierSlot<unsigned> Dim;
  ModifierSlot<StateSpace> Dst, Src;
  ModifierSlot<TensorLoadMode> Mode;
  ModifierSlot<CompletionMechanism> Completion;
  ModifierSlot<bool> Multicast, CacheHint, CpMask, NoFtz, L2;
  ModifierSlot<uint8_t> CtaGroup;
  ModifierSlot<ReductionOp> Red;
  ModifierSlot<unsigned> TypeBytes;
};

enum BulkFlags : unsigned {
  TensorWords = 1,  ///< .Nd and load modes
  ReduceWords = 2,  ///< .redOp (and .noftz and a type for non-tensor reductions)
  PrefetchWords = 4 ///< .L2 (the prefetch target)
};

std::optional<SyncDecodeResult> scanBulkWords(ModifierCursor &C, unsigned Flags, BulkWords &W) {
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (auto S = spaceWord(M)) {
      if (W.Src)
        return FailBulk("a bulk copy names two state spaces, destination then source", M);
      Fresh = W.Dst ? W.Src.set(*S, M) : W.Dst.set(*S, M);
    } else if (M == "mbarrier::complete_tx::bytes") {
      Fresh = W.Completion.set(CompletionMechanism::MbarrierCompleteTx, M);
    } else if (M == "bulk_group") {
      Fresh = W.Completion.set(CompletionMechanism::BulkGroup, M);
    } else if (M == "multicast::cluster") {
      Fresh = W.Multicast.set(true, M);
    } else if (M == "L2::cache_hint") {
      Fresh = W.CacheHint.set(true, M);
    } else if (auto G = ctaGroupWord(M)) {
      Fresh = W.CtaGroup.set(*G, M);
    } else if (M == "cp_mask" && !(Flags & (TensorWords | ReduceWords))) {
      Fresh = W.CpMask.set(true, M);
    } else if (M == "L2" && (Flags & PrefetchWords)) {
      Fresh = W.L2.set(true, M);
    } else if (auto Dim = numberIn(M, "", "d"); Dim && (Flags & TensorWords)) {
      if (*Dim < 1 || *Dim > 5)
        return FailBulk("tensor copies have 1 to 5 dimensions", M);
      Fresh = W.Dim.set(*Dim, M);
    } else if (auto Mode = loadModeWord(M); Mode && (Flags & TensorWords)) {
      Fresh = W.Mode.set(*Mode, M);
    } else if (auto Red = reductionWord(M); Red && (Flags & ReduceWords)) {
      Fresh = W.Red.set(*Red, M);
    } else if (M == "noftz" && (Flags & ReduceWords) && !(Flags & TensorWords)) {
      Fresh = W.NoFtz.set(true, M);
    } else if (auto Bytes = typeWordBytes(M); Bytes && (Flags & ReduceWords) &&
                                              !(Flags & TensorWords)) {
      Fresh = W.TypeBytes.set(*Bytes, M);
    } else {
      return FailBulk("unknown modifier", M);
    }
    if (!Fresh)
      return FailBulk("repeated modifier", M);
  }
  return std::nullopt;
}

/// `[tensorMap, {c0, ...}]` with as many coordinates as the form needs.
std::optional<SyncDecodeResult> checkTensorOperand(ptx::Operand Op, unsigned Dims,
                                                   TensorLoadMode Mode) {
  if (!isAddress(Op) || Op.addressExtras().size() != 1 || !isVector(Op.addressExtras()[0]))
    return FailBulk("the tensor operand is '[tensorMap, {coordinates}]'");
  unsigned Want = Dims;
  // gather4 and scatter4 move four rows of a 2-d tensor: one column and four row coordinates.
  if (Mode == TensorLoadMode::TileGather4 || Mode == TensorLoadMode::TileScatter4) {
    if (Dims != 2)
      return FailBulk("'.tile::gather4' and '.tile::scatter4' are 2-d only");
    Want = 5;
  }
  if (Op.addressExtras()[0].elements().size() != Want)
    return FailBulk("the coordinate vector does not match the tensor's dimensions");
  return std::nullopt;
}

/// ::= cp.async.bulk.tensor.dim.dst.global{.load_mode}.mbarrier::complete_tx::bytes
///         {.multicast::cluster}{.cta_group}{.L2::cache_hint}
///         [dstMem], [tensorMap, tensorCoords], [mbar]{, im2colInfo}{, ctaMask}{, cache-policy}
///     (dst = .shared::cta or .shared::cluster; .multicast::cluster only to .shared::cluster)
/// ::= cp.async.bulk.tensor.dim.global.shared::cta{.load_mode}.bulk_group{.L2::cache_hint}
///         [tensorMap, tensorCoords], [srcMem]{, cache-policy}
/// ::= cp.reduce.async.bulk.tensor.dim.global.shared::cta.redOp{.load_mode}.bulk_group
///         {.L2::cache_hint} [tensorMap, tensorCoords], [srcMem]{, cache-policy}
SyncDecodeResult decodeBulkTensor(const ptx::Instruction &I, ModifierCursor &C, bool Reduce) {
  BulkWords W;
  if (auto R = scanBulkWords(C, TensorWords | (Reduce ? unsigned(ReduceWords) : 0u), W))
    return *R;
  if (!W.Dim)
    return FailBulk("a tensor copy needs its dimension, '.1d' to '.5d'");
  if (!W.Dst || !W.Src)
    return FailBulk("a tensor copy names its destination and source state spaces");
  if (!W.Completion)
    return FailBulk("a tensor copy needs '.mbarrier::complete_tx::bytes' or '.bulk_group'");
  TensorLoadMode Mode = W.Mode.valueOr(TensorLoadMode::Tile);
  ptx::OperandRange Ops = I.operands();

  bool Load = *W.Src == StateSpace::Global &&
              (*W.Dst == StateSpace::SharedCta || *W.Dst == StateSpace::SharedCluster);
  bool Store = *W.Dst == StateSpace::Global && *W.Src == StateSpace::SharedCta;
  if (Reduce && !Store)
    return FailBulk("cp.reduce.async.bulk.tensor goes from '.shared::cta' to '.global'");
  if (Reduce && !W.Red)
    return FailBulk("cp.reduce.async.bulk.tensor needs a reduction such as '.add'");
  if (Load) {
    if (*W.Completion != CompletionMechanism::MbarrierCompleteTx)
      return FailBulk("a tensor load completes with '.mbarrier::complete_tx::bytes'",
                      W.Completion.Text);
    if (Mode == TensorLoadMode::TileScatter4 || Mode == TensorLoadMode::Im2colNoOffs)
      return FailBulk("this load mode is for tensor stores", W.Mode.Text);
    if (W.Multicast && *W.Dst != StateSpace::SharedCluster)
      return FailBulk("multicast loads write '.shared::cluster'", W.Multicast.Text);
  } else if (Store) {
    if (*W.Completion != CompletionMechanism::BulkGroup)
      return FailBulk("a tensor store completes with '.bulk_group'", W.Completion.Text);
    if (Mode == TensorLoadMode::TileGather4 || Mode == TensorLoadMode::Im2col ||
        Mode == TensorLoadMode::Im2colW || Mode == TensorLoadMode::Im2colW128 ||
        (Reduce && Mode == TensorLoadMode::TileScatter4))
      return FailBulk("this load mode is not one of a tensor store", W.Mode.Text);
    if (W.Multicast)
      return FailBulk("tensor stores do not multicast", W.Multicast.Text);
    if (W.CtaGroup)
      return FailBulk("tensor stores take no '.cta_group'", W.CtaGroup.Text);
  } else {
    return FailBulk("a tensor copy goes from '.global' to shared memory or from "
                    "'.shared::cta' to '.global'",
                    W.Src.Text);
  }

  unsigned Want = Load ? 3 + (isIm2colWithInfo(Mode) ? 1 : 0) + (W.Multicast ? 1 : 0) +
                             (W.CacheHint ? 1 : 0)
                       : 2 + (W.CacheHint ? 1 : 0);
  if (Ops.size() != Want)
    return FailBulk(Load ? "a tensor load takes [dstMem], [tensorMap, coords], [mbar]"
                           "{, im2colInfo}{, ctaMask}{, cache-policy}"
                         : "a tensor store takes [tensorMap, coords], [srcMem]{, cache-policy}");
  unsigned TensorIndex = Load ? 1 : 0;
  if (auto R = checkTensorOperand(Ops[TensorIndex], *W.Dim, Mode))
    return *R;
  if (!isAddress(Ops[Load ? 0 : 1]) || (Load && !isAddress(Ops[2])))
    return FailBulk("shared-memory and mbarrier operands are addresses '[...]'");

  SyncOpBuilder B(I, Load ? SyncKind::BulkTensorLoad
                          : (Reduce ? SyncKind::BulkTensorReduce : SyncKind::BulkTensorStore));
  B->Dims = static_cast<uint8_t>(*W.Dim);
  B->DstSpace = *W.Dst;
  B->SrcSpace = *W.Src;
  B->LoadMode = Mode;
  B->Completion = *W.Completion;
  B->Multicast = W.Multicast.has_value();
  B->CacheHint = W.CacheHint.has_value();
  B->CtaGroup = W.CtaGroup.valueOr(0);
  B->Reduction = W.Red.valueOr(ReductionOp::None);
  unsigned Next;
  if (Load) {
    // The barrier is in the destination's CTA (or with .cta_group::2, possibly its peer's),
    // addressed like the destination.
    B->Space = *W.Dst;
    B.roles(0, {OperandRole::Dst, OperandRole::TensorMap, OperandRole::Barrier});
    Next = 3;
    if (isIm2colWithInfo(Mode)) {
      if (!isVector(Ops[Next]))
        return FailBulk("im2colInfo is a vector '{...}'");
      B.role(OperandRole::Im2colInfo, Next++);
    }
    if (W.Multicast)
      B.role(OperandRole::CtaMask, Next++);
  } else {
    B.roles(0, {OperandRole::TensorMap, OperandRole::Src});
    Next = 2;
  }
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, Next++);
  if ((W.Multicast && !isScalar(B->operand(OperandRole::CtaMask))) ||
      (W.CacheHint && !isScalar(B->operand(OperandRole::CachePolicy))))
    return FailBulk("ctaMask and cache-policy are registers or immediates");
  return B.done();
}

/// ::= cp.async.bulk.prefetch.tensor.dim.L2.global{.load_mode}{.L2::cache_hint}
///         [tensorMap, tensorCoords]{, im2colInfo}{, cache-policy}
SyncDecodeResult decodeBulkTensorPrefetch(const ptx::Instruction &I, ModifierCursor &C) {
  BulkWords W;
  if (auto R = scanBulkWords(C, TensorWords | PrefetchWords, W))
    return *R;
  if (!W.Dim)
    return FailBulk("a tensor prefetch needs its dimension, '.1d' to '.5d'");
  if (!W.L2)
    return FailBulk("a tensor prefetch goes to '.L2'");
  if (!W.Dst || *W.Dst != StateSpace::Global || W.Src)
    return FailBulk("a tensor prefetch reads '.global'", W.Dst.Text);
  if (W.Completion || W.Multicast || W.CtaGroup)
    return FailBulk("a prefetch has no completion, multicast or cta_group");
  TensorLoadMode Mode = W.Mode.valueOr(TensorLoadMode::Tile);
  if (Mode == TensorLoadMode::TileScatter4 || Mode == TensorLoadMode::Im2colNoOffs)
    return FailBulk("this load mode is for tensor stores", W.Mode.Text);
  ptx::OperandRange Ops = I.operands();
  unsigned Want = 1 + (isIm2colWithInfo(Mode) ? 1 : 0) + (W.CacheHint ? 1 : 0);
  if (Ops.size() != Want)
    return FailBulk("a tensor prefetch takes [tensorMap, coords]{, im2colInfo}{, cache-policy}");
  if (auto R = checkTensorOperand(Ops[0], *W.Dim, Mode))
    return *R;
  SyncOpBuilder B(I, SyncKind::BulkTensorPrefetch);
  B->Dims = static_cast<uint8_t>(*W.Dim);
  B->SrcSpace = StateSpace::Global;
  B->LoadMode = Mode;
  B->CacheHint = W.CacheHint.has_value();
  B.role(OperandRole::TensorMap, 0);
  unsigned Next = 1;
  if (isIm2colWithInfo(Mode)) {
    if (!isVector(Ops[Next]))
      return FailBulk("im2colInfo is a vector '{...}'");
    B.role(OperandRole::Im2colInfo, Next++);
  }
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, Next++);
  return B.done();
}

/// ::= cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
///         [dstMem], [srcMem], size, [mbar]{, cache-policy}
/// ::= cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster}
///         {.L2::cache_hint} [dstMem], [srcMem], size, [mbar]{, ctaMask}{, cache-policy}
/// ::= cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
///         [dstMem], [srcMem], size, [mbar]
/// ::= cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}{.cp_mask}
///         [dstMem], [srcMem], size{, cache-policy}{, byteMask}
/// ::= cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type
///         [dstMem], [srcMem], size, [mbar]
/// ::= cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp{.noftz}.type
///         [dstMem], [srcMem], size{, cache-policy}
SyncDecodeResult decodeBulkCopy(const ptx::Instruction &I, ModifierCursor &C, bool Reduce) {
  BulkWords W;
  if (auto R = scanBulkWords(C, Reduce ? unsigned(ReduceWords) : 0u, W))
    return *R;
  if (!W.Dst || !W.Src)
    return FailBulk("a bulk copy names its destination and source state spaces");
  if (!W.Completion)
    return FailBulk("a bulk copy needs '.mbarrier::complete_tx::bytes' or '.bulk_group'");
  if (W.CtaGroup)
    return FailBulk("non-tensor bulk copies take no '.cta_group'", W.CtaGroup.Text);
  if (Reduce && (!W.Red || !W.TypeBytes))
    return FailBulk("cp.reduce.async.bulk needs a reduction and a type, such as '.add.u32'");
  if (W.NoFtz && (!W.Red || *W.Red != ReductionOp::Add))
    return FailBulk("'.noftz' goes with '.add'", W.NoFtz.Text);
  StateSpace Dst = *W.Dst, Src = *W.Src;
  bool ToShared = Src == StateSpace::Global &&
                  (Dst == StateSpace::SharedCta || Dst == StateSpace::SharedCluster) && !Reduce;
  bool ToPeer = Src == StateSpace::SharedCta && Dst == StateSpace::SharedCluster;
  bool ToGlobal = Src == StateSpace::SharedCta && Dst == StateSpace::Global;
  if (!ToShared && !ToPeer && !ToGlobal)
    return FailBulk(Reduce ? "cp.reduce.async.bulk goes from '.shared::cta' to "
                             "'.shared::cluster' or '.global'"
                           : "a bulk copy goes from '.global' to shared memory, from "
                             "'.shared::cta' to '.shared::cluster', or to '.global'",
                    W.Src.Text);
  CompletionMechanism Want =
      ToGlobal ? CompletionMechanism::BulkGroup : CompletionMechanism::MbarrierCompleteTx;
  if (*W.Completion != Want)
    return FailBulk(ToGlobal ? "a bulk copy to '.global' completes with '.bulk_group'"
                             : "a bulk copy to shared memory completes with "
                               "'.mbarrier::complete_tx::bytes'",
                    W.Completion.Text);
  if (W.Multicast && !(ToShared && Dst == StateSpace::SharedCluster))
    return FailBulk("only copies from '.global' to '.shared::cluster' multicast",
                    W.Multicast.Text);
  if (W.CacheHint && ToPeer)
    return FailBulk("copies between CTAs take no cache hint", W.CacheHint.Text);
  if (W.CpMask && !ToGlobal)
    return FailBulk("'.cp_mask' is for copies to '.global'", W.CpMask.Text);

  ptx::OperandRange Ops = I.operands();
  unsigned Count = ToGlobal ? 3 + (W.CacheHint ? 1 : 0) + (W.CpMask ? 1 : 0)
                            : 4 + (W.Multicast ? 1 : 0) + (W.CacheHint ? 1 : 0);
  if (Ops.size() != Count)
    return FailBulk(ToGlobal ? "a bulk store takes [dstMem], [srcMem], size{, cache-policy}"
                               "{, byteMask}"
                             : "a bulk copy takes [dstMem], [srcMem], size, [mbar]"
                               "{, ctaMask}{, cache-policy}");
  if (!isAddress(Ops[0]) || !isAddress(Ops[1]) || !isScalar(Ops[2]) ||
      (!ToGlobal && !isAddress(Ops[3])))
    return FailBulk("a bulk copy takes addresses '[...]' and a size");

  SyncKind Kind = Reduce ? SyncKind::BulkReduce
                  : ToGlobal ? SyncKind::BulkStore
                  : ToPeer   ? SyncKind::BulkSharedToCluster
                             : SyncKind::BulkLoad;
  SyncOpBuilder B(I, Kind);
  B->DstSpace = Dst;
  B->SrcSpace = Src;
  B->Completion = *W.Completion;
  B->Multicast = W.Multicast.has_value();
  B->CacheHint = W.CacheHint.has_value();
  B->Reduction = W.Red.valueOr(ReductionOp::None);
  B.roles(0, {OperandRole::Dst, OperandRole::Src, OperandRole::Size});
  unsigned Next = 3;
  if (!ToGlobal) {
    B->Space = Dst;
    B.role(OperandRole::Barrier, Next++);
  }
  if (W.Multicast)
    B.role(OperandRole::CtaMask, Next++);
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, Next++);
  if (W.CpMask)
    B.role(OperandRole::ByteMask, Next++);
  return B.done();
}

/// ::= cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [srcMem], size{, cache-policy}
SyncDecodeResult decodeBulkPrefetch(const ptx::Instruction &I, ModifierCursor &C) {
  BulkWords W;
  if (auto R = scanBulkWords(C, PrefetchWords, W))
    return *R;
  if (!W.L2 || !W.Dst || *W.Dst != StateSpace::Global || W.Src)
    return FailBulk("a bulk prefetch is '.L2.global'");
  if (W.Completion || W.Multicast || W.CtaGroup || W.CpMask)
    return FailBulk("a prefetch has no completion, multicast, cta_group or byte mask");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2u + (W.CacheHint ? 1 : 0) || !isAddress(Ops[0]) || !isScalar(Ops[1]))
    return FailBulk("a bulk prefetch takes [srcMem], size{, cache-policy}");
  SyncOpBuilder B(I, SyncKind::BulkPrefetch);
  B->SrcSpace = StateSpace::Global;
  B->CacheHint = W.CacheHint.has_value();
  B.roles(0, {OperandRole::Src, OperandRole::Size});
  if (W.CacheHint)
    B.role(OperandRole::CachePolicy, 2);
  return B.done();
}

/// ::= commit_group ;  ::= wait_group{.read} N ;  ::= wait_all  (after the prefix)
/// N is an immediate: the number of newest groups that may still be pending.
SyncDecodeResult decodeGroupOp(const ptx::Instruction &I, ModifierCursor &C, SyncKind Kind,
                               const Reject &Fail) {
  bool Wait = Kind == SyncKind::BulkWaitGroup || Kind == SyncKind::CpAsyncWaitGroup;
  bool Read = false;
  if (Kind == SyncKind::BulkWaitGroup && C.take("read"))
    Read = true;
  if (!C.atEnd())
    return Fail("unknown modifier", C.peek());
  ptx::OperandRange Ops = I.operands();
  if (Wait ? (Ops.size() != 1 || !isImmediate(Ops[0])) : !Ops.empty())
    return Fail(Wait ? "wait_group takes the immediate N" : "this instruction takes no operands");
  SyncOpBuilder B(I, Kind);
  B->ReadOnly = Read;
  if (Wait)
    B.role(OperandRole::WaitN, 0);
  return B.done();
}

/// ::= cp.async.ca.shared{::cta}.global{.L2::cache_hint}{.L2::prefetch_size}
///         [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}
/// ::= cp.async.cg.shared{::cta}.global{.L2::cache_hint}{.L2::prefetch_size}
///         [dst], [src], 16{, src-size | ignore-src}{, cache-policy}
/// The state spaces are the destination, then the source; the other words in any order.
SyncDecodeResult decodeCpAsyncCopy(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<StringRef> CacheOp;
  ModifierSlot<StateSpace> Dst, Src;
  ModifierSlot<bool> CacheHint, Prefetch;
  if (auto R = scanWords(C, FailAsync, [&](StringRef M) {
        if (M == "ca" || M == "cg")
          return fit(CacheOp, std::optional(M), M);
        if (auto S = spaceWord(M))
          return Dst ? fit(Src, S, M) : fit(Dst, S, M);
        if (M == "L2::cache_hint")
          return flag(CacheHint, M);
        if (M == "L2::64B" || M == "L2::128B" || M == "L2::256B")
          return flag(Prefetch, M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!CacheOp)
    return FailAsync("cp.async needs '.ca' or '.cg'");
  if (!Dst || *Dst != StateSpace::SharedCta || !Src || *Src != StateSpace::Global)
    return FailAsync("cp.async copies from '.global' to '.shared{::cta}'");
  ptx::OperandRange Ops = I.operands();
  unsigned Min = 3 + (CacheHint ? 1 : 0);
  if (Ops.size() < Min || Ops.size() > Min + 1 || !isAddress(Ops[0]) || !isAddress(Ops[1]) ||
      !isImmediate(Ops[2]))
    return FailAsync("cp.async takes [dst], [src], cp-size{, src-size}{, cache-policy}");
  if (*CacheOp == "cg" && Ops[2].integerValue() != 16)
    return FailAsync("cp.async.cg copies 16 bytes", Ops[2].text());
  SyncOpBuilder B(I, SyncKind::CpAsync);
  B->DstSpace = StateSpace::SharedCta;
  B->SrcSpace = StateSpace::Global;
  B->CacheHint = CacheHint.has_value();
  B.roles(0, {OperandRole::Dst, OperandRole::Src, OperandRole::CopySize});
  unsigned Next = 3;
  if (Ops.size() == Min + 1)
    B.role(OperandRole::SrcSize, Next++);
  if (CacheHint)
    B.role(OperandRole::CachePolicy, Next++);
  return B.done();
}

} // namespace

SyncDecodeResult wsv::models::decodeCp(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (C.take("reduce")) {
    if (!C.take("async") || !C.take("bulk"))
      return FailBulk("the reductions are 'cp.reduce.async.bulk{.tensor}'", C.peek());
    if (C.take("tensor"))
      return decodeBulkTensor(I, C, /*Reduce=*/true);
    return decodeBulkCopy(I, C, /*Reduce=*/true);
  }
  if (!C.take("async"))
    return FailAsync("unknown 'cp' instruction", C.peek());
  if (C.take("bulk")) {
    if (C.take("tensor"))
      return decodeBulkTensor(I, C, /*Reduce=*/false);
    if (C.take("prefetch")) {
      if (C.take("tensor"))
        return decodeBulkTensorPrefetch(I, C);
      return decodeBulkPrefetch(I, C);
    }
    if (C.take("commit_group"))
      return decodeGroupOp(I, C, SyncKind::BulkCommitGroup, FailBulk);
    if (C.take("wait_group"))
      return decodeGroupOp(I, C, SyncKind::BulkWaitGroup, FailBulk);
    return decodeBulkCopy(I, C, /*Reduce=*/false);
  }
  if (C.take("mbarrier"))
    return decodeCpAsyncMbarrierArrive(I, C);
  if (C.take("commit_group"))
    return decodeGroupOp(I, C, SyncKind::CpAsyncCommitGroup, FailAsync);
  if (C.take("wait_group"))
    return decodeGroupOp(I, C, SyncKind::CpAsyncWaitGroup, FailAsync);
  if (C.take("wait_all"))
    return decodeGroupOp(I, C, SyncKind::CpAsyncWaitAll, FailAsync);
  if (C.peek() == "ca" || C.peek() == "cg" || spaceWord(C.peek()))
    return decodeCpAsyncCopy(I, C);
  return FailAsync("unknown cp.async instruction", C.peek());
}
