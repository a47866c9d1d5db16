//===- SyncOpDecodeWgmma.cpp - wgmma.* --------------------------------------------===//
//
// PTX ISA 9.0, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions":
// wgmma.fence, wgmma.mma_async, wgmma.mma_async.sp, wgmma.commit_group and
// wgmma.wait_group. All are `.sync.aligned`: the four warps of a warpgroup execute them
// together.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject Fail{SyncFamily::Wgmma};

/// The type families of wgmma.mma_async's syntax blocks; each fixes K and the operand list.
enum class WgmmaTypes { Half, BFloat, Tf32, Fp8, Int, Bit };

struct WgmmaForm {
  WgmmaTypes Types;
  unsigned K;        ///< K of the dense form (doubled by .sp)
  unsigned Operands; ///< with A as a descriptor, dense
  bool TransImms;    ///< imm-trans-a/b follow (A from registers drops imm-trans-a)
};

/// dtype.atype.btype -> the form, or none for combinations the ISA does not list.
std::optional<WgmmaForm> wgmmaForm(StringRef D, StringRef A, StringRef B) {
  bool Fp8A = A == "e4m3" || A == "e5m2", Fp8B = B == "e4m3" || B == "e5m2";
  bool IntA = A == "s8" || A == "u8", IntB = B == "s8" || B == "u8";
  if (A == "f16" && B == "f16" && (D == "f16" || D == "f32"))
    return WgmmaForm{WgmmaTypes::Half, 16, 8, true};
  if (A == "bf16" && B == "bf16" && D == "f32")
    return WgmmaForm{WgmmaTypes::BFloat, 16, 8, true};
  if (A == "tf32" && B == "tf32" && D == "f32")
    return WgmmaForm{WgmmaTypes::Tf32, 8, 6, false};
  if (Fp8A && Fp8B && (D == "f16" || D == "f32"))
    return WgmmaForm{WgmmaTypes::Fp8, 32, 6, false};
  if (IntA && IntB && D == "s32")
    return WgmmaForm{WgmmaTypes::Int, 32, 4, false};
  if (A == "b1" && B == "b1" && D == "s32")
    return WgmmaForm{WgmmaTypes::Bit, 256, 4, false};
  return std::nullopt;
}

/// Whether N is one of the shapes the ISA lists for these types: multiples of 8 up to 256
/// for floating point, a sparser set for the integer and single-bit forms.
bool validN(WgmmaTypes T, unsigned N, bool Sparse) {
  if (N < 8 || N > 256 || N % 8 != 0)
    return false;
  if (T != WgmmaTypes::Int && T != WgmmaTypes::Bit)
    return true;
  // 8, 16, 24, 32, then multiples of 16; the dense integer form stops at 224.
  if (N > 32 && N % 16 != 0)
    return false;
  if (T == WgmmaTypes::Int && !Sparse && N > 224)
    return false;
  return true;
}

/// `m64n128k16` -> (64, 128, 16).
bool parseShape(StringRef M, unsigned &Mdim, unsigned &Ndim, unsigned &Kdim) {
  if (!M.consume_front("m"))
    return false;
  size_t NPos = M.find('n'), KPos = M.find('k');
  if (NPos == StringRef::npos || KPos == StringRef::npos || KPos < NPos)
    return false;
  return !M.take_front(NPos).getAsInteger(10, Mdim) &&
         !M.slice(NPos + 1, KPos).getAsInteger(10, Ndim) &&
         !M.drop_front(KPos + 1).getAsInteger(10, Kdim);
}

/// ::= wgmma.mma_async{.sp}.sync.aligned.shape{.satfinite}.dtype.atype.btype{.and.popc}
///         d, a-desc | a, b-desc{, sp-meta, sp-sel}, scale-d{, imm-scale-a, imm-scale-b}
///         {, imm-trans-a}{, imm-trans-b}
/// The words come in any order, except that the three types keep theirs (dtype, atype,
/// btype) and `.and.popc` is one pair.
SyncDecodeResult decodeMmaAsync(const ptx::Instruction &I, ModifierCursor &C) {
  ModifierSlot<bool> Sparse, Sync, Aligned, Satfinite, And, Popc;
  ModifierSlot<StringRef> Shape;
  StringRef Types[3];
  unsigned NumTypes = 0, Word = 0, AndAt = 0, PopcAt = 0;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        ++Word;
        if (M == "sp")
          return flag(Sparse, M);
        if (M == "sync")
          return flag(Sync, M);
        if (M == "aligned")
          return flag(Aligned, M);
        if (M == "satfinite")
          return flag(Satfinite, M);
        if (M == "and") {
          AndAt = Word;
          return flag(And, M);
        }
        if (M == "popc") {
          PopcAt = Word;
          return flag(Popc, M);
        }
        if (M.starts_with("m") && M.contains('n') && M.contains('k'))
          return fit(Shape, std::optional(M), M);
        if (typeWordBytes(M) || M == "b1") {
          if (NumTypes == 3)
            return WordFit::Unknown;
          Types[NumTypes++] = M;
          return WordFit::Taken;
        }
        return WordFit::Unknown;
      }))
    return *R;
  if (!Sync || !Aligned)
    return Fail("wgmma.mma_async is '.sync.aligned'");
  unsigned Mdim, Ndim, Kdim;
  if (!Shape || !parseShape(*Shape, Mdim, Ndim, Kdim))
    return Fail("wgmma.mma_async needs a shape such as '.m64n128k16'", Shape.Text);
  std::optional<WgmmaForm> Form =
      NumTypes == 3 ? wgmmaForm(Types[0], Types[1], Types[2]) : std::nullopt;
  if (!Form)
    return Fail("not a wgmma type combination (dtype.atype.btype)");
  if (Satfinite && Form->Types != WgmmaTypes::Int)
    return Fail("'.satfinite' is for the integer forms", Satfinite.Text);
  bool Bit = Form->Types == WgmmaTypes::Bit;
  if (Bit && Sparse)
    return Fail("the single-bit form is dense only", Sparse.Text);
  if (Bit != (And && Popc) || (Bit && PopcAt != AndAt + 1) || (!Bit && (And || Popc)))
    return Fail("'.and.popc' goes with the single-bit form, and only there");
  bool Sp = Sparse.has_value();
  if (Mdim != 64 || Kdim != Form->K * (Sp ? 2 : 1) || !validN(Form->Types, Ndim, Sp))
    return Fail("not a shape of these wgmma types", Shape.Text);

  ptx::OperandRange Ops = I.operands();
  if (Ops.size() < 3)
    return Fail("wgmma.mma_async takes d, a, b-desc, scale-d, ...");
  bool ARegs = isVector(Ops[1]);
  unsigned Want = Form->Operands - (ARegs && Form->TransImms ? 1 : 0) + (Sp ? 2 : 0);
  if (Ops.size() != Want)
    return Fail(ARegs ? "wrong number of operands for wgmma.mma_async with A in registers"
                      : "wrong number of operands for wgmma.mma_async");
  if (!isVector(Ops[0]) || (!ARegs && !isScalar(Ops[1])) || !isScalar(Ops[2]))
    return Fail("wgmma.mma_async takes {d...}, a-desc or {a...}, b-desc");
  for (unsigned K = 3; K < Ops.size(); ++K)
    if (!isScalar(Ops[K]) || isSink(Ops[K]))
      return Fail("the operands after b-desc are registers or immediates");

  SyncOpBuilder B(I, SyncKind::WgmmaMmaAsync);
  B->Aligned = true;
  B->Sparse = Sp;
  B->ShapeM = static_cast<uint16_t>(Mdim);
  B->ShapeN = static_cast<uint16_t>(Ndim);
  B->ShapeK = static_cast<uint16_t>(Kdim);
  B.roles(0, {OperandRole::Accumulators, ARegs ? OperandRole::AFragment : OperandRole::ADesc,
              OperandRole::BDesc});
  unsigned Next = 3;
  if (Sp) {
    B.roles(Next, {OperandRole::SparseMeta, OperandRole::SparseSelector});
    Next += 2;
  }
  B.role(OperandRole::ScaleD, Next++);
  if (Form->Operands >= 6) {
    B.roles(Next, {OperandRole::ImmScaleA, OperandRole::ImmScaleB});
    Next += 2;
  }
  if (Form->TransImms) {
    if (!ARegs)
      B.role(OperandRole::ImmTransA, Next++);
    B.role(OperandRole::ImmTransB, Next++);
  }
  for (unsigned K = 0; K < B->numRoles(); ++K) {
    OperandRole R = B->roleAt(K);
    bool Imm = R == OperandRole::ImmScaleA || R == OperandRole::ImmScaleB ||
               R == OperandRole::ImmTransA || R == OperandRole::ImmTransB;
    if (Imm && !isImmediate(B->operandAt(K)))
      return Fail("imm-scale and imm-trans operands are immediates", B->operandAt(K).text());
  }
  return B.done();
}

} // namespace

/// ::= wgmma.fence.sync.aligned
/// ::= wgmma.commit_group.sync.aligned
/// ::= wgmma.wait_group.sync.aligned N
/// ::= wgmma.mma_async...
SyncDecodeResult wsv::models::decodeWgmma(const ptx::Instruction &I) {
  ModifierCursor C(I);
  StringRef Operation = C.next();
  if (Operation == "mma_async")
    return decodeMmaAsync(I, C);
  SyncKind Kind;
  if (Operation == "fence")
    Kind = SyncKind::WgmmaFence;
  else if (Operation == "commit_group")
    Kind = SyncKind::WgmmaCommitGroup;
  else if (Operation == "wait_group")
    Kind = SyncKind::WgmmaWaitGroup;
  else if (Operation.empty())
    return Fail("'wgmma' needs an operation such as '.mma_async'");
  else
    return Fail("unknown wgmma operation", Operation);
  ModifierSlot<bool> Sync, Aligned;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (M == "sync")
          return flag(Sync, M);
        if (M == "aligned")
          return flag(Aligned, M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!Sync || !Aligned)
    return Fail("wgmma instructions are '.sync.aligned'");
  ptx::OperandRange Ops = I.operands();
  bool Wait = Kind == SyncKind::WgmmaWaitGroup;
  if (Wait ? (Ops.size() != 1 || !isImmediate(Ops[0])) : !Ops.empty())
    return Fail(Wait ? "wgmma.wait_group takes the immediate N"
                     : "this wgmma instruction takes no operands");
  SyncOpBuilder B(I, Kind);
  B->Aligned = true;
  if (Wait)
    B.role(OperandRole::WaitN, 0);
  return B.done();
}
