//===- Operand.cpp - operand values decoded on demand -----------------------------===//
#include "ConstantExpr.h"
#include "ParserImpl.h"
#include "wsv/ptx_parser/Operand.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace wsv::ptx;
using llvm::StringRef;

const char *wsv::ptx::toString(OperandKind Kind) {
  switch (Kind) {
  case OperandKind::Name: return "name";
  case OperandKind::SpecialRegister: return "special register";
  case OperandKind::Sink: return "sink";
  case OperandKind::Integer: return "integer";
  case OperandKind::Float: return "float";
  case OperandKind::String: return "string";
  case OperandKind::Expression: return "constant expression";
  case OperandKind::Address: return "address";
  case OperandKind::Vector: return "vector";
  case OperandKind::Pair: return "pair";
  case OperandKind::List: return "list";
  case OperandKind::SymbolOffset: return "symbol offset";
  case OperandKind::SymbolDifference: return "symbol difference";
  case OperandKind::Assignment: return "assignment";
  }
  return "operand";
}

std::optional<int64_t> Operand::integerValue() const {
  if (kind() == OperandKind::Expression) {
    ConstantValue V;
    if (evaluateConstantText(text(), V))
      return std::nullopt;
    return static_cast<int64_t>(V.Bits);
  }
  if (kind() != OperandKind::Integer)
    return std::nullopt;
  uint64_t Magnitude = 0;
  if (!parseIntegerLiteral(text(), Magnitude))
    return std::nullopt;
  // Two's complement wrap-around, as ptxas treats a 64-bit immediate.
  uint64_t Bits = isNegated() ? ~Magnitude + 1 : Magnitude;
  return static_cast<int64_t>(Bits);
}

std::optional<uint64_t> Operand::floatBits() const {
  if (kind() != OperandKind::Float)
    return std::nullopt;
  StringRef T = text();
  if (T.size() < 3 || T[0] != '0' || !(T[1] == 'f' || T[1] == 'F' || T[1] == 'd' || T[1] == 'D'))
    return std::nullopt;
  uint64_t Bits = 0;
  if (T.drop_front(2).getAsInteger(16, Bits))
    return std::nullopt;
  return Bits;
}

std::optional<double> Operand::floatValue() const {
  if (kind() != OperandKind::Float)
    return std::nullopt;
  double Value;
  StringRef T = text();
  if (std::optional<uint64_t> Bits = floatBits()) {
    if (T[1] == 'f' || T[1] == 'F')
      Value = llvm::bit_cast<float>(static_cast<uint32_t>(*Bits));
    else
      Value = llvm::bit_cast<double>(*Bits);
  } else if (T.getAsDouble(Value, /*AllowInexact=*/true)) {
    return std::nullopt;
  }
  return isNegated() ? -Value : Value;
}

const char *Operand::ptr() const {
  if (isLeaf() || isInlineAddress())
    return Base + Slot->Offset;
  OperandRange Elements = elements();
  return Elements.empty() ? Base : Elements.front().ptr();
}

StringRef Operand::addressBaseName() const {
  if (kind() != OperandKind::Address)
    return {};
  if (isInlineAddress())
    return StringRef(Base + Slot->Offset, Slot->Len & 0xFF);
  Operand B = elements()[0];
  return B.is(OperandKind::Integer) ? StringRef() : B.text();
}

std::optional<int64_t> Operand::addressBaseInteger() const {
  if (kind() != OperandKind::Address || isInlineAddress())
    return std::nullopt;
  return elements()[0].integerValue();
}

std::optional<int64_t> Operand::addressOffset() const {
  if (kind() != OperandKind::Address || !hasAddressOffset())
    return 0;
  if (isInlineAddress())
    return static_cast<int16_t>(Slot->Len >> 8);
  return elements()[1].integerValue();
}

OperandRange Operand::addressExtras() const {
  if (kind() != OperandKind::Address || isInlineAddress())
    return {};
  return elements().drop_front(hasAddressOffset() ? 2 : 1);
}

/// `%pm0`..`%pm7`, `%pm0_64`..`%pm7_64`, `%envreg0`..`%envreg31`,
/// `%reserved_smem_offset_0`, `%reserved_smem_offset_1`.
static bool isNumberedSpecial(StringRef Name) {
  auto DigitsIn = [](StringRef Digits, unsigned Max) {
    unsigned N;
    return !Digits.empty() && Digits.size() <= 2 && !Digits.getAsInteger(10, N) && N <= Max;
  };
  if (Name.consume_front("%envreg"))
    return DigitsIn(Name, 31);
  if (Name.consume_front("%pm")) {
    Name.consume_back("_64");
    return DigitsIn(Name, 7);
  }
  if (Name.consume_front("%reserved_smem_offset_"))
    return Name == "0" || Name == "1";
  return false;
}

bool wsv::ptx::isSpecialRegisterName(StringRef Name) {
  return llvm::StringSwitch<bool>(Name)
      .Cases("%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", true)
      .Cases("%smid", "%nsmid", "%gridid", "%is_explicit_cluster", "%clusterid", true)
      .Cases("%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", true)
      .Cases("%cluster_nctarank", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", true)
      .Cases("%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi", "%clock64", true)
      .Cases("%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%total_smem_size", true)
      .Cases("%aggr_smem_size", "%dynamic_smem_size", "%current_graph_exec", true)
      .Cases("%reserved_smem_offset_begin", "%reserved_smem_offset_end", true)
      .Case("%reserved_smem_offset_cap", true)
      .Default(isNumberedSpecial(Name));
}
