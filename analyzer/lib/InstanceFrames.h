//===- InstanceFrames.h - where an instantiation evaluates, and what it keeps --------===//
//
// Private to RoleProgramInstance.cpp: the frame an expression is evaluated in (a CTA, a
// thread, the loops' iterations) and the values of expression nodes across frames.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/RoleProgram.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace wsv {
namespace analyzer {
namespace instance {

/// Where evaluation happens: one agent, the loops around the step, one thread of it.
struct Frame {
  unsigned Cta = 0;
  unsigned Thread = 0;
  llvm::SmallVector<std::pair<LoopId, uint64_t>, 4> Loops;
};

/// Values of expressions across the frames of one instantiation. The steps of a loop
/// evaluate the same expressions again and again, most of whose parts do not change from one
/// iteration to the next (a tile's coordinates inside its k-loop, a CTA's counts): each node
/// keeps its value with the time it was computed, and is computed again only when something
/// it reads (the thread, the CTA, a loop's iteration) changed since.
class FrameCache {
public:
  template <typename LeafFn>
  std::optional<uint64_t> eval(const Expr *E, const Frame &F, LeafFn Leaf) {
    observe(F);
    return evalNode(E, Leaf);
  }

  bool threadDependent(const Expr *E) {
    auto [It, New] = ThreadDependent.try_emplace(E, false);
    if (New)
      It->second = isThreadDependent(E);
    return It->second;
  }

private:
  static constexpr unsigned ThreadBit = 0, CtaBit = 1, FirstLoopBit = 2, Bits = 64;
  static constexpr uint64_t Everything = ~uint64_t(0);

  /// What a node reads that changes within an instantiation, as bits (Everything when a
  /// loop has no bit of its own).
  uint64_t reads(const Expr *N) {
    if (N->isConstant())
      return 0;
    if (auto It = Reads.find(N); It != Reads.end())
      return It->second;
    uint64_t R = 0;
    if (N->is(ExprKind::SpecialReg)) {
      SpecialRegister Reg = N->specialRegister();
      if (!isCtaUniform(Reg))
        R = uint64_t(1) << ThreadBit;
      else if (Reg == SpecialRegister::CtaidX || Reg == SpecialRegister::ClusterCtaRank ||
               Reg == SpecialRegister::ClusterCtaidX || Reg == SpecialRegister::ClusteridX)
        R = uint64_t(1) << CtaBit;
    } else if (N->is(ExprKind::IterationVar)) {
      auto [It, New] = LoopBit.try_emplace(N->payload(), FirstLoopBit + LoopBit.size());
      R = It->second < Bits ? uint64_t(1) << It->second : Everything;
    } else if (!N->isLeaf()) {
      for (const Expr *Op : N->ops())
        R |= reads(Op);
    }
    return Reads[N] = R;
  }

  /// Advances the clock for everything F reads differently from the last frame. Most
  /// evaluations come in runs on one frame (a step's expressions), where nothing changed:
  /// comparing the frame is cheaper than looking up each loop's bit (a fifth of the time
  /// of exploring H6's launch at 8192^3, cluster by cluster, went there).
  void observe(const Frame &F) {
    if (Seen && F.Thread == SeenFrame.Thread && F.Cta == SeenFrame.Cta &&
        F.Loops == SeenFrame.Loops && LoopBit.size() == SeenLoopBits)
      return;
    Seen = true;
    SeenFrame = F;
    SeenLoopBits = LoopBit.size();
    ++Clock;
    auto Note = [&](unsigned Bit, std::optional<uint64_t> V) {
      if (Last[Bit] != V) {
        Last[Bit] = V;
        Changed[Bit] = Clock;
      }
    };
    Note(ThreadBit, F.Thread);
    Note(CtaBit, F.Cta);
    for (auto [Loop, Bit] : LoopBit) {
      if (Bit >= Bits)
        continue;
      std::optional<uint64_t> V;
      for (const auto &[L, X] : F.Loops)
        if (L == Loop)
          V = X;
      Note(Bit, V);
    }
  }

  template <typename LeafFn> std::optional<uint64_t> evalNode(const Expr *N, LeafFn &Leaf) {
    if (N->isConstant())
      return N->payload();
    if (N->isLeaf())
      return Leaf(N);
    uint64_t R = reads(N);
    Entry &En = Values[N];
    if (En.Time && R != Everything) {
      bool Fresh = true;
      for (uint64_t M = R; M && Fresh; M &= M - 1)
        Fresh = Changed[llvm::countr_zero(M)] <= En.Time;
      if (Fresh)
        return En.Value;
    }
    std::optional<uint64_t> V;
    if (N->is(ExprKind::Select)) {
      // Only the chosen arm: an unknown in the other does not matter.
      std::optional<uint64_t> C = evalNode(N->op(0), Leaf);
      V = C ? evalNode(N->op(*C ? 1 : 2), Leaf) : std::nullopt;
    } else {
      uint64_t Ops[2] = {0, 0};
      bool Known = true;
      for (unsigned K = 0; K < N->ops().size() && K < 2 && Known; ++K) {
        std::optional<uint64_t> X = evalNode(N->op(K), Leaf);
        Known = X.has_value();
        Ops[K] = X.value_or(0);
      }
      if (Known)
        V = ExprContext::apply(N, llvm::ArrayRef<uint64_t>(Ops, N->ops().size()));
    }
    Entry &Again = Values[N]; // the recursion may have grown the map
    Again.Time = Clock;
    Again.Value = V;
    return V;
  }

  struct Entry {
    uint64_t Time = 0; ///< the clock when Value was computed (0: never)
    std::optional<uint64_t> Value;
  };
  llvm::DenseMap<const Expr *, Entry> Values;
  llvm::DenseMap<const Expr *, uint64_t> Reads;
  llvm::DenseMap<const Expr *, bool> ThreadDependent;
  llvm::DenseMap<uint64_t, unsigned> LoopBit;
  uint64_t Clock = 0;
  /// The frame observe() last looked at, and how many loops had bits then (a loop given
  /// its bit since must have its iteration noted).
  bool Seen = false;
  Frame SeenFrame;
  size_t SeenLoopBits = 0;
  std::optional<uint64_t> Last[Bits];
  uint64_t Changed[Bits] = {};
};

} // namespace instance
} // namespace analyzer
} // namespace wsv
