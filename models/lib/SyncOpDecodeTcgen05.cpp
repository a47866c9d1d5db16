//===- SyncOpDecodeTcgen05.cpp - tcgen05.* ----------------------------------------===//
//
// PTX ISA 9.0, "Tensor Core 5th Generation Family Instructions": tcgen05.alloc,
// tcgen05.dealloc, tcgen05.relinquish_alloc_permit ("Tensor Memory Allocation and
// Management Instructions"), tcgen05.ld, tcgen05.st, tcgen05.wait, tcgen05.cp,
// tcgen05.shift, tcgen05.mma (with .ws, .sp, .block_scale), tcgen05.commit and
// tcgen05.fence. All but the fences and tcgen05.mma/cp/shift/commit are `.sync.aligned`:
// the whole warp executes them together.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject Fail{SyncFamily::Tcgen05};

/// `.sync.aligned`: the whole warp executes the instruction together. ptxas 13.0 also takes
/// some of these without `.aligned`; the ISA's syntax blocks do not, and neither do we.
struct SyncAligned {
  ModifierSlot<bool> Sync, Aligned;
  WordFit fitWord(StringRef M) {
    if (M == "sync")
      return flag(Sync, M);
    if (M == "aligned")
      return flag(Aligned, M);
    return WordFit::Unknown;
  }
  bool both() const { return Sync && Aligned; }
};

/// ::= tcgen05.alloc.cta_group.sync.aligned{.shared::cta}.b32 [dst], nCols
/// ::= tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols
/// ::= tcgen05.relinquish_alloc_permit.cta_group.sync.aligned
SyncDecodeResult decodeAllocation(const ptx::Instruction &I, ModifierCursor &C, SyncKind Kind) {
  ModifierSlot<uint8_t> Group;
  ModifierSlot<bool> SharedCta, B32;
  SyncAligned SA;
  bool Relinquish = Kind == SyncKind::Tcgen05RelinquishAllocPermit;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (WordFit F = SA.fitWord(M); F != WordFit::Unknown)
          return F;
        if (M == "shared::cta" && Kind == SyncKind::Tcgen05Alloc)
          return flag(SharedCta, M);
        if (M == "b32" && !Relinquish)
          return flag(B32, M);
        return fit(Group, ctaGroupWord(M), M);
      }))
    return *R;
  if (!Group)
    return Fail("tcgen05 allocation needs '.cta_group::1' or '.cta_group::2'");
  if (!SA.both())
    return Fail("tcgen05 allocation is '.sync.aligned'");
  if (!Relinquish && !B32)
    return Fail("tcgen05.alloc and tcgen05.dealloc take the type '.b32'");
  ptx::OperandRange Ops = I.operands();
  SyncOpBuilder B(I, Kind);
  B->CtaGroup = *Group;
  B->Aligned = true;
  switch (Kind) {
  case SyncKind::Tcgen05Alloc:
    if (Ops.size() != 2 || !isAddress(Ops[0]) || !isScalar(Ops[1]))
      return Fail("tcgen05.alloc takes [dst], nCols");
    B->Space = SharedCta ? StateSpace::SharedCta : StateSpace::Generic;
    B.roles(0, {OperandRole::TmemAddrDst, OperandRole::Columns});
    break;
  case SyncKind::Tcgen05Dealloc:
    if (Ops.size() != 2 || !isScalar(Ops[0]) || isSink(Ops[0]) || !isScalar(Ops[1]))
      return Fail("tcgen05.dealloc takes taddr, nCols");
    B->Space = StateSpace::Tmem;
    B.roles(0, {OperandRole::TmemAddr, OperandRole::Columns});
    break;
  default:
    if (!Ops.empty())
      return Fail("tcgen05.relinquish_alloc_permit takes no operands");
    break;
  }
  return B.done();
}

/// ::= tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64
///         [mbar]{, ctaMask}
SyncDecodeResult decodeCommit(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<uint8_t> Group;
  ModifierSlot<bool> ArriveOne, Cluster, Multicast, Type;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (auto G = ctaGroupWord(M))
      Fresh = Group.set(*G, M);
    else if (M == "mbarrier::arrive::one")
      Fresh = ArriveOne.set(true, M);
    else if (M == "shared::cluster")
      Fresh = Cluster.set(true, M);
    else if (M == "multicast::cluster")
      Fresh = Multicast.set(true, M);
    else if (M == "b64")
      Fresh = Type.set(true, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!Group)
    return Fail("tcgen05.commit needs '.cta_group::1' or '.cta_group::2'");
  if (!ArriveOne)
    return Fail("tcgen05.commit completes with '.mbarrier::arrive::one'");
  if (!Type)
    return Fail("tcgen05.commit takes the type '.b64'");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != (Multicast ? 2u : 1u) || !isAddress(Ops[0]) ||
      (Multicast && (!isScalar(Ops[1]) || isSink(Ops[1]))))
    return Fail(Multicast ? "a multicast tcgen05.commit takes [mbar], ctaMask"
                          : "tcgen05.commit takes [mbar]");
  SyncOpBuilder B(I, SyncKind::Tcgen05Commit);
  B->CtaGroup = *Group;
  B->Completion = CompletionMechanism::MbarrierArriveOne;
  B->Space = Cluster ? StateSpace::SharedCluster : StateSpace::Generic;
  B->Multicast = Multicast.has_value();
  B.role(OperandRole::Barrier, 0);
  if (Multicast)
    B.role(OperandRole::CtaMask, 1);
  return B.done();
}

/// The data-path shapes of tcgen05.ld/st: lanes x bits.
struct LdStShape {
  uint16_t Lanes, Bits;
  bool HalfSplit; ///< .16x32bx2: two half-warps with an immediate offset between them
};

std::optional<LdStShape> ldStShape(StringRef M) {
  return llvm::StringSwitch<std::optional<LdStShape>>(M)
      .Case("16x64b", LdStShape{16, 64, false})
      .Case("16x128b", LdStShape{16, 128, false})
      .Case("16x256b", LdStShape{16, 256, false})
      .Case("32x32b", LdStShape{32, 32, false})
      .Case("16x32bx2", LdStShape{16, 32, true})
      .Default(std::nullopt);
}

/// `.x1`, `.x2`, ... `.x128`: powers of two.
bool isRepeatCount(unsigned N) { return N >= 1 && N <= 128 && (N & (N - 1)) == 0; }

/// ::= tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32 r, [taddr]{, immHalfSplitoff}
/// ::= tcgen05.ld.red.sync.aligned.shape.num.redOp{.abs}{.NaN}.f32 r, redval, [taddr]{, imm}
/// ::= tcgen05.ld.red.sync.aligned.shape.num.redOp.{u32,s32} r, redval, [taddr]{, imm}
/// ::= tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32 [taddr]{, immHalfSplitoff}, r
/// `.red` belongs to the name (`tcgen05.ld.red`); the other words come in any order.
SyncDecodeResult decodeLdSt(const ptx::Instruction &I, ModifierCursor &C, bool Load) {
  bool Red = Load && C.take("red");
  SyncAligned SA;
  ModifierSlot<LdStShape> Shape;
  ModifierSlot<unsigned> Repeat;
  ModifierSlot<bool> Pack, Abs, NaN;
  ModifierSlot<ReductionOp> RedOp;
  ModifierSlot<StringRef> Type;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (WordFit F = SA.fitWord(M); F != WordFit::Unknown)
          return F;
        if (auto S = ldStShape(M))
          return fit(Shape, S, M);
        if (auto N = numberIn(M, "x"))
          return fit(Repeat, N, M);
        if (M == (Load ? "pack::16b" : "unpack::16b") && !Red)
          return flag(Pack, M);
        if (Red && (M == "min" || M == "max"))
          return fit(RedOp, std::optional(M == "min" ? ReductionOp::Min : ReductionOp::Max), M);
        if (Red && M == "abs")
          return flag(Abs, M);
        if (Red && M == "NaN")
          return flag(NaN, M);
        if (M == "b32" || (Red && (M == "f32" || M == "u32" || M == "s32")))
          return fit(Type, std::optional(M), M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!SA.both())
    return Fail("tcgen05.ld and tcgen05.st are '.sync.aligned'");
  if (!Shape)
    return Fail("tcgen05.ld/st needs a shape such as '.32x32b'");
  if (!Repeat || !isRepeatCount(*Repeat))
    return Fail("tcgen05.ld/st needs a repeat count '.x1' to '.x128'", Repeat.Text);
  if (Red) {
    if (Shape->Lanes != 32 && !Shape->HalfSplit)
      return Fail("tcgen05.ld.red has the shapes '.32x32b' and '.16x32bx2'", Shape.Text);
    if (!RedOp)
      return Fail("tcgen05.ld.red reduces with '.min' or '.max'");
    if (!Type || (*Type != "f32" && (Abs || NaN)))
      return Fail("tcgen05.ld.red takes '.f32' (with '.abs', '.NaN'), '.u32' or '.s32'");
  } else if (!Type) {
    return Fail("tcgen05.ld/st takes the type '.b32'");
  }

  ptx::OperandRange Ops = I.operands();
  unsigned Want = (Red ? 3 : 2) + (Shape->HalfSplit ? 1 : 0);
  if (Ops.size() != Want)
    return Fail(Shape->HalfSplit ? "'.16x32bx2' takes the immediate half-split offset"
                                 : "wrong number of operands for tcgen05.ld/st");
  SyncOpBuilder B(I, Load ? SyncKind::Tcgen05Ld : SyncKind::Tcgen05St);
  B->Aligned = true;
  B->Space = StateSpace::Tmem;
  B->ShapeM = Shape->Lanes;
  B->ShapeN = Shape->Bits;
  B->Repeat = static_cast<uint8_t>(*Repeat);
  B->Pack16 = Pack.has_value();
  B->Reduction = RedOp.valueOr(ReductionOp::None);
  if (Load) {
    unsigned Addr = Red ? 2 : 1;
    if (!isVector(Ops[0]) || !isAddress(Ops[Addr]) || (Red && !isScalar(Ops[1])))
      return Fail(Red ? "tcgen05.ld.red takes {r...}, redval, [taddr]"
                      : "tcgen05.ld takes {r...}, [taddr]");
    B.role(OperandRole::Data, 0);
    if (Red)
      B.role(OperandRole::ReduceValue, 1);
    B.role(OperandRole::TmemAddr, Addr);
    if (Shape->HalfSplit)
      B.role(OperandRole::HalfSplitOffset, Addr + 1);
  } else {
    unsigned Data = Shape->HalfSplit ? 2 : 1;
    if (!isAddress(Ops[0]) || !isVector(Ops[Data]))
      return Fail("tcgen05.st takes [taddr], {r...}");
    B.role(OperandRole::TmemAddr, 0);
    if (Shape->HalfSplit)
      B.role(OperandRole::HalfSplitOffset, 1);
    B.role(OperandRole::Data, Data);
  }
  if (Shape->HalfSplit && !isImmediate(B->operand(OperandRole::HalfSplitOffset)))
    return Fail("the half-split offset is an immediate");
  return B.done();
}

/// ::= tcgen05.wait::ld.sync.aligned  |  tcgen05.wait::st.sync.aligned
/// ::= tcgen05.fence::before_thread_sync  |  tcgen05.fence::after_thread_sync
SyncDecodeResult decodeNoOperands(const ptx::Instruction &I, ModifierCursor &C, SyncKind Kind,
                                  bool NeedsSyncAligned) {
  SyncAligned SA;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        return NeedsSyncAligned ? SA.fitWord(M) : WordFit::Unknown;
      }))
    return *R;
  if (NeedsSyncAligned && !SA.both())
    return Fail("tcgen05.wait is '.sync.aligned'");
  if (!I.operands().empty())
    return Fail("this tcgen05 instruction takes no operands");
  SyncOpBuilder B(I, Kind);
  B->Aligned = NeedsSyncAligned;
  return B.done();
}

/// ::= tcgen05.cp.cta_group.shape{.multicast}{.dst_src_fmt} [taddr], s-desc
/// .shape = {.128x256b, .4x256b, .128x128b, .64x128b, .32x128b}
/// .multicast = {.warpx2::02_13, .warpx2::01_23 (with .64x128b), .warpx4 (with .32x128b)}
/// .dst_src_fmt = {.b8x16.b6x16_p32, .b8x16.b4x16_p64}: two words, in that order.
SyncDecodeResult decodeTcgen05Cp(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<uint8_t> Group;
  ModifierSlot<StringRef> Shape, Warps, SrcFmt;
  ModifierSlot<bool> DstFmt;
  unsigned Word = 0, DstFmtAt = 0, SrcFmtAt = 0;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        ++Word;
        if (M == "128x256b" || M == "4x256b" || M == "128x128b" || M == "64x128b" ||
            M == "32x128b")
          return fit(Shape, std::optional(M), M);
        if (M == "warpx2::02_13" || M == "warpx2::01_23" || M == "warpx4")
          return fit(Warps, std::optional(M), M);
        if (M == "b8x16") {
          DstFmtAt = Word;
          return flag(DstFmt, M);
        }
        if (M == "b6x16_p32" || M == "b4x16_p64") {
          SrcFmtAt = Word;
          return fit(SrcFmt, std::optional(M), M);
        }
        return fit(Group, ctaGroupWord(M), M);
      }))
    return *R;
  if (!Group)
    return Fail("tcgen05.cp needs '.cta_group::1' or '.cta_group::2'");
  if (!Shape)
    return Fail("tcgen05.cp needs a shape such as '.128x256b'");
  bool NeedsWarpx2 = *Shape == "64x128b", NeedsWarpx4 = *Shape == "32x128b";
  if (NeedsWarpx2 && (!Warps || *Warps == "warpx4"))
    return Fail("'.64x128b' copies need '.warpx2::02_13' or '.warpx2::01_23'", Warps.Text);
  if (NeedsWarpx4 && (!Warps || *Warps != "warpx4"))
    return Fail("'.32x128b' copies need '.warpx4'", Warps.Text);
  if (!NeedsWarpx2 && !NeedsWarpx4 && Warps)
    return Fail("only the '.64x128b' and '.32x128b' copies name their warps", Warps.Text);
  if (DstFmt.has_value() != SrcFmt.has_value() || (DstFmt && SrcFmtAt != DstFmtAt + 1))
    return Fail("the format is '.b8x16' followed by '.b6x16_p32' or '.b4x16_p64'");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2 || !isAddress(Ops[0]) || !isScalar(Ops[1]) || isSink(Ops[1]))
    return Fail("tcgen05.cp takes [taddr], s-desc");
  SyncOpBuilder B(I, SyncKind::Tcgen05Cp);
  B->CtaGroup = *Group;
  B->Space = StateSpace::Tmem;
  B->Multicast = Warps.has_value();
  B.roles(0, {OperandRole::TmemAddr, OperandRole::SourceDesc});
  return B.done();
}

/// ::= tcgen05.shift.cta_group.down [taddr]
SyncDecodeResult decodeShift(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<uint8_t> Group;
  ModifierSlot<bool> Down;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (M == "down")
          return flag(Down, M);
        return fit(Group, ctaGroupWord(M), M);
      }))
    return *R;
  if (!Group)
    return Fail("tcgen05.shift needs '.cta_group::1' or '.cta_group::2'");
  if (!Down)
    return Fail("tcgen05.shift is '.down'");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 1 || !isAddress(Ops[0]))
    return Fail("tcgen05.shift takes [taddr]");
  SyncOpBuilder B(I, SyncKind::Tcgen05Shift);
  B->CtaGroup = *Group;
  B->Space = StateSpace::Tmem;
  B.role(OperandRole::TmemAddr, 0);
  return B.done();
}

std::optional<MmaKind> mmaKindWord(StringRef M) {
  return llvm::StringSwitch<std::optional<MmaKind>>(M)
      .Case("kind::f16", MmaKind::F16)
      .Case("kind::tf32", MmaKind::Tf32)
      .Case("kind::f8f6f4", MmaKind::F8f6f4)
      .Case("kind::i8", MmaKind::I8)
      .Case("kind::mxf8f6f4", MmaKind::Mxf8f6f4)
      .Case("kind::mxf4", MmaKind::Mxf4)
      .Case("kind::mxf4nvf4", MmaKind::Mxf4nvf4)
      .Default(std::nullopt);
}

bool isBlockScaledKind(MmaKind K) {
  return K == MmaKind::Mxf8f6f4 || K == MmaKind::Mxf4 || K == MmaKind::Mxf4nvf4;
}

/// `collector::<buffer>::<op>`: buffer `a` for tcgen05.mma, `b0`..`b3` for tcgen05.mma.ws.
bool isCollectorWord(StringRef M, bool WarpSpecialized) {
  if (!M.consume_front("collector::"))
    return false;
  StringRef Buffer = M.take_until([](char Ch) { return Ch == ':'; });
  M = M.drop_front(Buffer.size());
  bool BufferOk = WarpSpecialized ? (Buffer == "b0" || Buffer == "b1" || Buffer == "b2" ||
                                     Buffer == "b3")
                                  : Buffer == "a";
  return BufferOk && (M == "::fill" || M == "::use" || M == "::lastuse" || M == "::discard");
}

/// ::= tcgen05.mma{.ws}{.sp}.cta_group.kind{.block_scale{.scale_vectorsize}}
///         {.collector_usage}{.ashift}
///         [d-tmem], a-desc | [a-tmem], b-desc{, [sp-meta-tmem]}, idesc, <tail>
/// where <tail> is
///     {, disable-output-lane}, enable-input-d{, scale-input-d}     (plain)
///     [scale-A-tmem], [scale-B-tmem], enable-input-d              (.block_scale)
///     enable-input-d{, zero-column-mask-desc}                     (.ws)
SyncDecodeResult decodeMma(const ptx::Instruction &I, ModifierCursor &C) {
  bool Ws = C.take("ws");
  bool Sp = C.take("sp");
  ModifierSlot<uint8_t> Group;
  ModifierSlot<MmaKind> Kind;
  ModifierSlot<bool> BlockScale, ScaleVec, Collector, Ashift;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (auto G = ctaGroupWord(M))
      Fresh = Group.set(*G, M);
    else if (auto K = mmaKindWord(M))
      Fresh = Kind.set(*K, M);
    else if (M == "block_scale")
      Fresh = BlockScale.set(true, M);
    else if (M == "scale_vec::1X" || M == "scale_vec::2X" || M == "scale_vec::4X" ||
             M == "block16" || M == "block32")
      Fresh = ScaleVec.set(true, M);
    else if (isCollectorWord(M, Ws))
      Fresh = Collector.set(true, M);
    else if (M == "ashift" && !Ws)
      Fresh = Ashift.set(true, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!Group)
    return Fail("tcgen05.mma needs '.cta_group::1' or '.cta_group::2'");
  if (Ws && *Group != 1)
    return Fail("tcgen05.mma.ws is '.cta_group::1' only", Group.Text);
  if (!Kind)
    return Fail("tcgen05.mma needs a '.kind::*'");
  if (isBlockScaledKind(*Kind) != BlockScale.has_value())
    return Fail(BlockScale ? "'.block_scale' goes with the mx kinds"
                           : "the mx kinds need '.block_scale'",
                Kind.Text);
  if (Ws && BlockScale)
    return Fail("tcgen05.mma.ws has no '.block_scale'", BlockScale.Text);
  if (ScaleVec && !BlockScale)
    return Fail("a scale vector size goes with '.block_scale'", ScaleVec.Text);
  if (Ashift && BlockScale)
    return Fail("'.ashift' does not go with '.block_scale'", Ashift.Text);

  ptx::OperandRange Ops = I.operands();
  unsigned Prefix = Sp ? 5 : 4; // d, a, b{, sp-meta}, idesc
  if (Ops.size() <= Prefix)
    return Fail("tcgen05.mma takes [d-tmem], a, b-desc, idesc, enable-input-d ...");
  bool ATmem = isAddress(Ops[1]);
  if (!isAddress(Ops[0]) || (!ATmem && !isScalar(Ops[1])) || !isScalar(Ops[2]) ||
      (Sp && !isAddress(Ops[3])) || !isScalar(Ops[Prefix - 1]))
    return Fail("tcgen05.mma takes [d-tmem], a-desc or [a-tmem], b-desc"
                "{, [sp-meta-tmem]}, idesc");
  if (Ashift && !ATmem)
    return Fail("'.ashift' needs A in tensor memory", Ashift.Text);

  SyncOpBuilder B(I, SyncKind::Tcgen05Mma);
  B->CtaGroup = *Group;
  B->Mma = *Kind;
  B->Sparse = Sp;
  B->WarpSpecialized = Ws;
  B->BlockScale = BlockScale.has_value();
  B->Space = StateSpace::Tmem;
  B.roles(0, {OperandRole::DTmem, ATmem ? OperandRole::ATmem : OperandRole::ADesc,
              OperandRole::BDesc});
  if (Sp)
    B.role(OperandRole::SparseMeta, 3);
  B.role(OperandRole::InstrDesc, Prefix - 1);

  unsigned Rest = Ops.size() - Prefix;
  if (BlockScale) {
    if (Rest != 3 || !isAddress(Ops[Prefix]) || !isAddress(Ops[Prefix + 1]) ||
        !isScalar(Ops[Prefix + 2]))
      return Fail("block-scaled tcgen05.mma ends with [scale-A-tmem], [scale-B-tmem], "
                  "enable-input-d");
    B.roles(Prefix, {OperandRole::ScaleATmem, OperandRole::ScaleBTmem,
                     OperandRole::EnableInputD});
    return B.done();
  }
  if (Ws) {
    if (Rest > 2 || !isScalar(Ops[Prefix]) || (Rest == 2 && !isScalar(Ops[Prefix + 1])))
      return Fail("tcgen05.mma.ws ends with enable-input-d{, zero-column-mask-desc}");
    B.role(OperandRole::EnableInputD, Prefix);
    if (Rest == 2)
      B.role(OperandRole::ZeroColumnMask, Prefix + 1);
    return B.done();
  }
  unsigned Next = Prefix;
  if (isVector(Ops[Next]))
    B.role(OperandRole::DisableOutputLane, Next++);
  if (Next >= Ops.size() || !isScalar(Ops[Next]))
    return Fail("tcgen05.mma needs enable-input-d");
  B.role(OperandRole::EnableInputD, Next++);
  if (Next < Ops.size()) {
    // Only the f16 and tf32 kinds scale D ("scale-input-d"), and only by an immediate.
    if (*Kind != MmaKind::F16 && *Kind != MmaKind::Tf32)
      return Fail("scale-input-d is for '.kind::f16' and '.kind::tf32'", Kind.Text);
    if (!isImmediate(Ops[Next]) || Next + 1 != Ops.size())
      return Fail("tcgen05.mma ends with enable-input-d and an optional immediate "
                  "scale-input-d");
    B.role(OperandRole::ScaleInputD, Next);
  }
  return B.done();
}

} // namespace

SyncDecodeResult wsv::models::decodeTcgen05(const ptx::Instruction &I) {
  ModifierCursor C(I);
  StringRef Operation = C.next();
  if (Operation == "mma")
    return decodeMma(I, C);
  if (Operation == "commit")
    return decodeCommit(I, C);
  if (Operation == "ld" || Operation == "st")
    return decodeLdSt(I, C, Operation == "ld");
  if (Operation == "wait::ld" || Operation == "wait::st")
    return decodeNoOperands(I, C,
                            Operation == "wait::ld" ? SyncKind::Tcgen05WaitLd
                                                    : SyncKind::Tcgen05WaitSt,
                            /*SyncAligned=*/true);
  if (Operation == "fence::before_thread_sync")
    return decodeNoOperands(I, C, SyncKind::Tcgen05FenceBeforeThreadSync, false);
  if (Operation == "fence::after_thread_sync")
    return decodeNoOperands(I, C, SyncKind::Tcgen05FenceAfterThreadSync, false);
  if (Operation == "alloc")
    return decodeAllocation(I, C, SyncKind::Tcgen05Alloc);
  if (Operation == "dealloc")
    return decodeAllocation(I, C, SyncKind::Tcgen05Dealloc);
  if (Operation == "relinquish_alloc_permit")
    return decodeAllocation(I, C, SyncKind::Tcgen05RelinquishAllocPermit);
  if (Operation == "cp")
    return decodeTcgen05Cp(I, C);
  if (Operation == "shift")
    return decodeShift(I, C);
  if (Operation.empty())
    return Fail("'tcgen05' needs an operation such as '.mma'");
  return Fail("unknown tcgen05 operation", Operation);
}
