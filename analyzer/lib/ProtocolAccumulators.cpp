//===- ProtocolAccumulators.cpp - where wgmma accumulators are read -----------------===//
//
// wgmma.mma_async writes its accumulator registers asynchronously: until a wgmma.wait_group
// retires its group, reading them (or copying them out in an epilogue) is undefined. The
// explorer checks each read against the agent's wgmma operations in flight, so the protocol
// needs the reads as events. Every register vector a wgmma writes is one accumulator (a bit,
// in program order); a mov of an accumulator register carries the bit to its destination
// (ptxas renames copies; clang's PTX moves loop-carried values that way) and is not a read;
// any other instruction reading such a register, except a wgmma itself (wgmmas on one
// accumulator are ordered by the hardware), reads it. One event is enough for the reads that
// follow each other with no wgmma operation, commit or wait in between: the first one, on
// each path (a forward data flow over the blocks).
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "wsv/models/SyncOp.h"

#include "llvm/ADT/StringMap.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

enum class Wgmma : uint8_t { None, Mma, Other };

/// What a wgmma instruction is (only those are decoded: this runs over every instruction).
Wgmma wgmmaKind(const ptx::Instruction &I) {
  if (!I.opcodeStartsWith("wgmma"))
    return Wgmma::None;
  models::SyncDecodeResult R = models::decodeSyncOp(I);
  if (!R.isDecoded())
    return Wgmma::Other; // unrecognized: taken to touch the accumulators' state too
  return R->Kind == models::SyncKind::WgmmaMmaAsync ? Wgmma::Mma : Wgmma::Other;
}

/// Calls F on the name of every register the operand mentions (vector elements, address
/// bases and extras).
template <typename Fn> void forEachName(const ptx::Operand &O, Fn F) {
  switch (O.kind()) {
  case ptx::OperandKind::Name:
    F(O.text());
    break;
  case ptx::OperandKind::Address:
    if (O.isInlineAddress())
      F(O.addressBaseName());
    else
      for (const ptx::Operand &E : O.elements())
        forEachName(E, F);
    break;
  case ptx::OperandKind::Vector:
  case ptx::OperandKind::Pair:
  case ptx::OperandKind::List:
    for (const ptx::Operand &E : O.elements())
      forEachName(E, F);
    break;
  default:
    break;
  }
}

} // namespace

AccumulatorAccesses wsv::analyzer::findAccumulatorAccesses(const Cfg &G) {
  AccumulatorAccesses Out;
  llvm::StringMap<uint32_t> Bits; // register -> the accumulators it holds
  llvm::StringMap<unsigned> Ids;  // first register of a destination vector -> its bit
  std::vector<Wgmma> Kind;
  Kind.reserve(G.instructions().size());
  for (const CfgInst &CI : G.instructions())
    Kind.push_back(wgmmaKind(*CI.I));
  for (InstId I = 0; I < G.instructions().size(); ++I) {
    if (Kind[I] != Wgmma::Mma)
      continue;
    ptx::OperandRange Ops = G.inst(I).I->operands();
    if (Ops.empty() || !Ops[0].is(ptx::OperandKind::Vector) || Ops[0].elements().empty())
      continue;
    auto [It, New] = Ids.try_emplace(Ops[0].elements().front().text(), Ids.size());
    uint32_t Bit = uint32_t(1) << std::min(It->second, 31u);
    Out.Writes[I] = Bit;
    forEachName(Ops[0], [&](llvm::StringRef R) { Bits[R] |= Bit; });
  }
  if (Bits.empty())
    return Out;
  // Copies carry accumulators, to a fixed point (loop-carried copies may come first); only
  // copies that may run after a wgmma: the zeroing before the first one (`mov.f32 %f2,
  // %f1` from a register that later holds an accumulator too) copies no result.
  std::vector<bool> After(G.instructions().size(), false);
  {
    std::vector<bool> Reached(G.size(), false);
    std::vector<BlockId> Work;
    for (BlockId B = 0; B < G.size(); ++B) {
      const BasicBlock &BB = G.block(B);
      bool Seen = false;
      for (InstId I = BB.Begin; I < BB.End; ++I) {
        After[I] = Seen;
        Seen |= Kind[I] == Wgmma::Mma;
      }
      if (Seen)
        Work.push_back(B);
    }
    while (!Work.empty()) {
      BlockId B = Work.back();
      Work.pop_back();
      for (BlockId S : G.block(B).Succs)
        if (!Reached[S]) {
          Reached[S] = true;
          Work.push_back(S);
        }
    }
    for (BlockId B = 0; B < G.size(); ++B)
      if (Reached[B])
        for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I)
          After[I] = true;
  }
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (InstId I = 0; I < G.instructions().size(); ++I) {
      const CfgInst &CI = G.inst(I);
      if (!After[I] || CI.I->baseName() != "mov" || CI.I->operands().size() != 2)
        continue;
      ptx::Operand Dst = CI.I->operands()[0], Src = CI.I->operands()[1];
      if (!Dst.isName() || !Src.isName())
        continue;
      auto From = Bits.find(Src.text());
      if (From == Bits.end())
        continue;
      uint32_t &To = Bits[Dst.text()];
      Changed |= (To | From->second) != To;
      To |= From->second;
    }
  }
  auto ReadBits = [&](InstId I) -> uint32_t {
    const ptx::Instruction &Inst = *G.inst(I).I;
    if (Inst.baseName() == "mov" || Kind[I] == Wgmma::Mma)
      return 0;
    uint32_t Read = 0;
    ptx::OperandRange Ops = Inst.operands();
    // The first operand is the destination, except for stores (an address). A guard is a
    // predicate, never an accumulator.
    for (unsigned K = 0; K < Ops.size(); ++K)
      if (K > 0 || Ops[K].is(ptx::OperandKind::Address))
        forEachName(Ops[K], [&](llvm::StringRef R) {
          auto It = Bits.find(R);
          if (It != Bits.end())
            Read |= It->second;
        });
    return Read;
  };
  // Pending[B]: on some path into B a wgmma operation, commit or wait came after the last
  // read that got an event. Monotone: it only turns true, so the iteration ends.
  std::vector<bool> Pending(G.size(), false);
  auto Scan = [&](BlockId B, bool Record) {
    bool P = Pending[B];
    const BasicBlock &BB = G.block(B);
    for (InstId I = BB.Begin; I < BB.End; ++I) {
      if (Kind[I] != Wgmma::None) {
        P = true;
        continue;
      }
      if (!P)
        continue;
      if (uint32_t Read = ReadBits(I)) {
        if (Record)
          Out.Reads[I] = Read;
        P = false;
      }
    }
    return P;
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (BlockId B : G.reversePostOrder()) {
      if (!Scan(B, false))
        continue;
      for (BlockId S : G.block(B).Succs)
        if (!Pending[S])
          Pending[S] = Changed = true;
    }
  }
  for (BlockId B : G.reversePostOrder())
    Scan(B, true);
  return Out;
}
