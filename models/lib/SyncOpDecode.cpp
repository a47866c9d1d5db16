//===- SyncOpDecode.cpp - dispatch on the base name, and the shared word tables ----===//
#include "SyncOpDecoder.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

SyncDecodeResult wsv::models::decodeSyncOp(const ptx::Instruction &I) {
  // Most instructions of a file are arithmetic, moves and branches: one look at the base
  // name's first letter sends them away before any string comparison.
  StringRef Base = I.baseName();
  if (Base.empty())
    return SyncDecodeResult::notSync();
  switch (Base[0]) {
  case 'a':
    if (Base == "atom")
      return decodeAtomOrRed(I);
    break;
  case 'b':
    if (Base == "bar")
      return decodeBar(I);
    if (Base == "barrier")
      return decodeBarrier(I);
    break;
  case 'c':
    if (Base == "cp")
      return decodeCp(I);
    if (Base == "clusterlaunchcontrol")
      return decodeClusterLaunchControl(I);
    break;
  case 'e':
    if (Base == "elect")
      return decodeElect(I);
    if (Base == "exit")
      return decodeThreadExit(I);
    break;
  case 'f':
    if (Base == "fence")
      return decodeFence(I);
    break;
  case 'l':
    if (Base == "ld")
      return decodeLd(I);
    if (Base == "ldmatrix")
      return decodeMatrix(I);
    break;
  case 'm':
    if (Base == "mbarrier")
      return decodeMbarrier(I);
    if (Base == "mapa")
      return decodeMapa(I);
    if (Base == "membar")
      return decodeMembar(I);
    break;
  case 'r':
    if (Base == "red")
      return decodeAtomOrRed(I);
    if (Base == "ret")
      return decodeThreadExit(I);
    break;
  case 's':
    if (Base == "st")
      return decodeSt(I);
    if (Base == "stmatrix")
      return decodeMatrix(I);
    if (Base == "setmaxnreg")
      return decodeSetmaxnreg(I);
    break;
  case 't':
    if (Base == "tcgen05")
      return decodeTcgen05(I);
    if (Base == "trap")
      return decodeThreadExit(I);
    break;
  case 'w':
    if (Base == "wgmma")
      return decodeWgmma(I);
    break;
  default:
    break;
  }
  return SyncDecodeResult::notSync();
}

//===- Shared words ---------------------------------------------------------------===//

std::optional<SyncScope> wsv::models::scopeWord(StringRef M) {
  return llvm::StringSwitch<std::optional<SyncScope>>(M)
      .Case("cta", SyncScope::Cta)
      .Case("cluster", SyncScope::Cluster)
      .Case("gpu", SyncScope::Gpu)
      .Case("sys", SyncScope::Sys)
      .Default(std::nullopt);
}

std::optional<MemorySemantics> wsv::models::semanticsWord(StringRef M) {
  return llvm::StringSwitch<std::optional<MemorySemantics>>(M)
      .Case("relaxed", MemorySemantics::Relaxed)
      .Case("acquire", MemorySemantics::Acquire)
      .Case("release", MemorySemantics::Release)
      .Case("acq_rel", MemorySemantics::AcqRel)
      .Case("sc", MemorySemantics::Sc)
      .Case("weak", MemorySemantics::Weak)
      .Case("volatile", MemorySemantics::Volatile)
      .Case("mmio", MemorySemantics::Mmio)
      .Default(std::nullopt);
}

std::optional<StateSpace> wsv::models::spaceWord(StringRef M) {
  return llvm::StringSwitch<std::optional<StateSpace>>(M)
      .Cases("shared", "shared::cta", StateSpace::SharedCta)
      .Case("shared::cluster", StateSpace::SharedCluster)
      .Case("global", StateSpace::Global)
      .Case("local", StateSpace::Local)
      .Cases("param", "param::entry", "param::func", StateSpace::Param)
      .Case("const", StateSpace::Const)
      .Default(std::nullopt);
}

std::optional<unsigned> wsv::models::typeWordBytes(StringRef M) {
  return llvm::StringSwitch<std::optional<unsigned>>(M)
      .Cases("b8", "u8", "s8", "e4m3", "e5m2", 1u)
      .Cases("b16", "u16", "s16", "f16", "bf16", 2u)
      .Cases("b32", "u32", "s32", "f32", "tf32", "f16x2", "bf16x2", 4u)
      .Cases("b64", "u64", "s64", "f64", 8u)
      .Case("b128", 16u)
      .Case("pred", 0u)
      .Default(std::nullopt);
}

std::optional<unsigned> wsv::models::vectorWord(StringRef M) {
  return llvm::StringSwitch<std::optional<unsigned>>(M)
      .Case("v2", 2u)
      .Case("v4", 4u)
      .Case("v8", 8u)
      .Default(std::nullopt);
}

std::optional<uint8_t> wsv::models::ctaGroupWord(StringRef M) {
  if (M == "cta_group::1")
    return 1;
  if (M == "cta_group::2")
    return 2;
  return std::nullopt;
}

std::optional<unsigned> wsv::models::numberIn(StringRef M, StringRef Prefix, StringRef Suffix) {
  if (!M.consume_front(Prefix) || !M.consume_back(Suffix) || M.empty())
    return std::nullopt;
  unsigned N;
  // Leading zeros are no part of any PTX shape or count word.
  if (M.size() > 1 && M[0] == '0')
    return std::nullopt;
  if (M.getAsInteger(10, N))
    return std::nullopt;
  return N;
}

//===- Operand shapes -------------------------------------------------------------===//

bool wsv::models::isAddress(ptx::Operand Op) { return Op.is(ptx::OperandKind::Address); }
bool wsv::models::isVector(ptx::Operand Op) { return Op.is(ptx::OperandKind::Vector); }
bool wsv::models::isSink(ptx::Operand Op) { return Op.is(ptx::OperandKind::Sink); }

bool wsv::models::isScalar(ptx::Operand Op) {
  switch (Op.kind()) {
  case ptx::OperandKind::Name:
  case ptx::OperandKind::SpecialRegister:
  case ptx::OperandKind::Sink:
  case ptx::OperandKind::Integer:
  case ptx::OperandKind::Float:
  case ptx::OperandKind::Expression:
  case ptx::OperandKind::SymbolOffset:
    return true;
  default:
    return false;
  }
}

bool wsv::models::isImmediate(ptx::Operand Op) {
  return Op.is(ptx::OperandKind::Integer) || Op.is(ptx::OperandKind::Expression);
}
