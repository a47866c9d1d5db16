//===- ProtocolBuild.h - what the protocol builder's steps share ------------------===//
//
// The builder runs in steps, one file each: collect the events from the CFG
// (ProtocolEvents.cpp), give barrier and buffer operands their identity and byte counts
// (ProtocolOperands.cpp), split the threads into phases and roles (ProtocolRoles.cpp), and
// lay each role's events out in its loops (ProtocolSequence.cpp). ProtocolBuilder.cpp runs
// them in that order over one BuildState.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/Roles.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace wsv {
namespace analyzer {

/// What the steps know about an event beyond the IR.
struct EventInfo {
  BlockId Block = NoIndex;
  unsigned Order = 0;    ///< position in the loop-contiguous block order, then in the block
  LoopId Loop = NoIndex; ///< the innermost loop around it that is not a spin wait
  /// The CTA-uniform conjuncts of its condition (closed form), kept apart from the threads.
  llvm::SmallVector<const Expr *, 4> Uniform;
  ThreadShape Shape = ThreadShape::Unknown;
  llvm::BitVector Reach; ///< every thread that may run it
  // Addresses (closed forms) of its operands, for barrier and buffer identity.
  const Expr *BarrierAddress = nullptr;
  const Expr *DstAddress = nullptr;
  const Expr *SrcAddress = nullptr;
  llvm::SmallVector<const Expr *, 2> ReadAddresses;
  /// tcgen05.mma's accumulator, tcgen05.ld's source: a TMEM address (resolveTmemColumns).
  const Expr *TmemAddress = nullptr;
  /// The tensor map parameter a TMA copy uses, when it can be told.
  std::optional<unsigned> TensorMapParam;
  enum class Phase : uint8_t { Prologue, Main, Epilogue } Where = Phase::Main;
  llvm::SmallVector<unsigned, 2> Roles; ///< main-phase events: the roles that run it
};

struct BuildState {
  BuildState(const ptx::Module &M, const ptx::Function &F, Protocol &P)
      : M(M), F(F), P(P), FA(*P.Analysis) {}

  const ptx::Module &M;
  const ptx::Function &F;
  Protocol &P;
  FunctionAnalysis &FA;
  std::optional<LaunchSpec> Spec;
  std::vector<EventInfo> Info; ///< parallel to P.Events
  std::vector<bool> SpinLoop;  ///< per LoopId: a try_wait loop folded into one Wait event
  std::vector<unsigned> BlockOrder; ///< per BlockId: position in the loop-contiguous order

  ExprContext &ctx() { return FA.context(); }
  const ValueAnalysis &values() { return FA.values(); }
  const Cfg &cfg() { return FA.cfg(); }
  SourceRef sourceOf(InstId I);
  /// The innermost loop containing B that is not a spin wait (NoIndex when none).
  LoopId countedLoopOf(BlockId B);
};

/// The wgmma accumulators of a function (ProtocolAccumulators.cpp): per wgmma.mma_async
/// instruction the accumulators it writes, and the instructions that get an
/// AccumulatorRead event with those they read (one bit per accumulator).
struct AccumulatorAccesses {
  llvm::DenseMap<InstId, uint32_t> Writes, Reads;
};
AccumulatorAccesses findAccumulatorAccesses(const Cfg &G);

/// Step 1: every synchronization event of the function, with its threads and conditions.
void collectEvents(BuildState &S);
/// Step 2: barrier arrays and buffers, each operand's slot, byte counts, init counts.
void resolveOperands(BuildState &S);
/// Step 2b: a try_wait that only decides whether a wait on the same phase follows reads as
/// failed in that wait's condition (ProtocolProbes.cpp says why that is exact).
void foldProbedWaits(BuildState &S);
/// Step 3: prologue, roles, epilogue; role names and thread sets.
void assignRoles(BuildState &S);
/// Step 4: each phase's and role's items, in loops, with their conditions.
void layOutSequences(BuildState &S);
/// Last: names of barriers and buffers from how the roles use them.
void nameByUsage(BuildState &S);
/// A note for each loop that spins on memory another thread writes (ProtocolMemorySpins.cpp).
void noteMemorySpins(BuildState &S);

} // namespace analyzer
} // namespace wsv
