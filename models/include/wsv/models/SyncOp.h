//===- SyncOp.h - typed records of the synchronization instructions of PTX --------===//
//
// decodeSyncOp() reads one parsed PTX instruction and says what it does for synchronization,
// in the words of the PTX ISA: which kind of operation (mbarrier.arrive.expect_tx, a TMA load,
// tcgen05.commit, bar.sync, ...), its decoded modifiers (scope, semantics, state spaces,
// cta_group, multicast, dimensions, ...) and its operands named by meaning (the barrier
// address, the arrival count, the tx byte count, the parity, the ctaMask, the TMEM columns,
// ...). Everything downstream (roles, the protocol IR, checks, the simulator replay) reads
// these records instead of opcode strings.
//
// Three outcomes, so that nothing sync-relevant is silently dropped:
//  - not synchronization (`add.s32`, `ld.global`): the instruction is of no interest;
//  - decoded: a SyncOp;
//  - unrecognized: the instruction belongs to a synchronization family (its base name is
//    mbarrier, tcgen05, bar, ...) but its form is not one the PTX ISA 9.0 defines; the result
//    says which family and why (`unknown modifier 'foo'`, `'.shared::cluster' needs the sink
//    '_' as its state operand`).
//
// Which forms are defined follows the syntax blocks of the PTX ISA 9.0 sections cited in
// the decoders (models/lib/SyncOpDecode*.cpp). After the words that name an instruction
// (`mbarrier.arrive`, `tcgen05.mma.ws`, `barrier.cluster.wait`, `bar.cta.sync`) the other
// modifiers may come in any order, each at most once: the syntax blocks list categories, ptxas
// 13.0 takes them in any order, and the ISA itself writes both `arrive.expect_tx{.sem}{.scope}
// {.state}` and `arrive_drop.expect_tx{.state}{.sem}{.scope}`. Order is kept where it carries
// meaning: the destination state space before the source in copies, wgmma's
// dtype.atype.btype, and the two-word qualifiers `.and.popc` and `.b8x16.b6x16_p32`.
// Values are not judged here (an init count of 0, 33 TMEM columns): that is what the checks
// are for, and they need the record to say where the value is. The unit test
// SyncOpPtxasTest checks these decisions against ptxas form by form.
//
// Records are small and hold no strings: operands are indices into the instruction's operand
// list, handed out as ptx::Operand handles, so a record is valid as long as its Module.
//
//   SyncDecodeResult R = decodeSyncOp(I);
//   if (R && R->Kind == SyncKind::MbarrierArriveExpectTx)
//     use(R->barrier(), R->immediate(OperandRole::TxBytes));   // [%r61], 32768
//   else if (R.isUnrecognized())
//     R.printReason(errs());  // unrecognized mbarrier form: unknown modifier 'foo'
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"
#include "wsv/ptx_parser/Operand.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <cstdint>
#include <optional>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace wsv {
namespace models {

//===- What an instruction is ----------------------------------------------------===//

/// Instruction families: how the decoder dispatches, and what an unrecognized instruction
/// was taken to be.
enum class SyncFamily : uint8_t {
  Mbarrier,             ///< mbarrier.*, cp.async.mbarrier.arrive
  BulkCopy,             ///< cp.async.bulk{.tensor}, cp.reduce.async.bulk{.tensor}, groups
  AsyncCopy,            ///< cp.async (the sm_80 form), cp.async.commit_group / wait_group
  Tcgen05,              ///< tcgen05.*
  Wgmma,                ///< wgmma.*
  Barrier,              ///< bar.*, barrier.{sync,arrive,red}
  ClusterBarrier,       ///< barrier.cluster.*
  Elect,                ///< elect.sync
  Fence,                ///< fence.*, membar.*
  Setmaxnreg,           ///< setmaxnreg.*
  Mapa,                 ///< mapa
  ClusterLaunchControl, ///< clusterlaunchcontrol.try_cancel
  MemoryAccess,         ///< ld/st/atom/red on shared or generic addresses, ldmatrix, stmatrix
  ThreadExit,           ///< exit, trap, ret
};

/// One value per operation the decoder distinguishes. Variants that differ only in a
/// modifier (parity or token wait, load mode, ...) share a kind and differ in SyncOp fields.
enum class SyncKind : uint8_t {
  // mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier").
  MbarrierInit,
  MbarrierInval,
  MbarrierArrive,             ///< with or without count, .noComplete, local or remote
  MbarrierArriveExpectTx,     ///< mbarrier.arrive.expect_tx
  MbarrierArriveDrop,         ///< lowers the expected count for later phases too
  MbarrierArriveDropExpectTx, ///< mbarrier.arrive_drop.expect_tx
  MbarrierExpectTx,
  MbarrierCompleteTx,
  MbarrierTestWait,           ///< non-blocking; WaitsOnParity tells .parity from the token form
  MbarrierTryWait,            ///< potentially blocking, may time out: the spin-loop form
  MbarrierPendingCount,
  CpAsyncMbarrierArrive,      ///< an arrival once the thread's earlier cp.async ops complete

  // Bulk asynchronous copies ("Data Movement and Conversion Instructions: cp.async.bulk...").
  BulkTensorLoad,      ///< TMA load: global -> shared::cta / shared::cluster, complete_tx
  BulkTensorStore,     ///< TMA store: shared::cta -> global, bulk_group
  BulkTensorReduce,    ///< cp.reduce.async.bulk.tensor: shared::cta -> global, bulk_group
  BulkTensorPrefetch,  ///< cp.async.bulk.prefetch.tensor to L2, no completion mechanism
  BulkLoad,            ///< cp.async.bulk global -> shared::cta / shared::cluster
  BulkSharedToCluster, ///< cp.async.bulk shared::cta -> shared::cluster (a peer CTA)
  BulkStore,           ///< cp.async.bulk shared::cta -> global, bulk_group
  BulkReduce,          ///< cp.reduce.async.bulk: to global (bulk_group) or to shared::cluster
  BulkPrefetch,        ///< cp.async.bulk.prefetch.L2
  BulkCommitGroup,
  BulkWaitGroup,       ///< ReadOnly for .read

  // Non-bulk async copies of sm_80 (cp.async): shared-memory writes by the async proxy.
  CpAsync,
  CpAsyncCommitGroup,
  CpAsyncWaitGroup,
  CpAsyncWaitAll,

  // tcgen05 ("Tensor Core 5th Generation Family Instructions").
  Tcgen05Mma,          ///< all kinds, .ws, .sp, .block_scale
  Tcgen05Commit,       ///< one arrival once the thread's earlier async tcgen05 ops complete
  Tcgen05Ld,
  Tcgen05St,
  Tcgen05WaitLd,
  Tcgen05WaitSt,
  Tcgen05Alloc,
  Tcgen05Dealloc,
  Tcgen05RelinquishAllocPermit,
  Tcgen05FenceBeforeThreadSync,
  Tcgen05FenceAfterThreadSync,
  Tcgen05Cp,
  Tcgen05Shift,

  // wgmma ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions").
  WgmmaFence,
  WgmmaMmaAsync,
  WgmmaCommitGroup,
  WgmmaWaitGroup,

  // Named barriers ("Parallel Synchronization and Communication Instructions: bar, barrier").
  BarrierSync,   ///< bar.sync, barrier.sync
  BarrierArrive, ///< bar.arrive, barrier.arrive
  BarrierRed,    ///< bar.red, barrier.red: a sync that also reduces a predicate
  BarWarpSync,   ///< bar.warp.sync

  ClusterArrive, ///< barrier.cluster.arrive
  ClusterWait,   ///< barrier.cluster.wait

  ElectSync,

  // Fences ("Parallel Synchronization and Communication Instructions: membar / fence").
  Fence,             ///< fence{.sem}.scope, fence.{acquire,release}.sync_restrict, membar.level
  FenceMbarrierInit, ///< fence.mbarrier_init.release.cluster
  FenceProxyAsync,   ///< fence.proxy.async{.global,.shared::cta,.shared::cluster}, async::generic
  FenceProxyAlias,   ///< fence.proxy.alias
  FenceProxyTensormap, ///< fence.proxy.tensormap::generic.{release,acquire}

  SetmaxnregInc,
  SetmaxnregDec,
  Mapa,
  ClusterLaunchTryCancel, ///< writes a 16-byte response and completes 16 bytes on an mbarrier

  // Memory accesses through the generic proxy that can touch shared memory.
  SharedLoad,    ///< ld.shared{::cta,::cluster}
  SharedStore,   ///< st.shared{::cta,::cluster}, st.bulk
  SharedAtomic,  ///< atom / red on shared{::cta,::cluster}
  GenericLoad,   ///< ld without a state space: the address may point to shared memory
  GenericStore,  ///< st without a state space
  GenericAtomic, ///< atom / red without a state space
  Ldmatrix,
  Stmatrix,
  StAsync,       ///< st.async to shared::cluster with complete_tx on the peer's mbarrier
  RedAsync,      ///< red.async to shared::cluster with complete_tx on the peer's mbarrier

  // The end of a thread's part in the protocol.
  Exit,
  Trap,
  Ret,
};

constexpr unsigned NumSyncKinds = static_cast<unsigned>(SyncKind::Ret) + 1;

//===- Decoded modifiers ---------------------------------------------------------===//

/// Memory-ordering semantics. Records hold the effective value: the one written, else the
/// default the ISA gives the instruction (mbarrier.arrive: release; try_wait: acquire).
enum class MemorySemantics : uint8_t {
  None,
  Relaxed,
  Acquire,
  Release,
  AcqRel,
  Sc,
  Weak,
  Volatile,
  Mmio,
};

/// Scope of a memory operation or fence; effective value as for MemorySemantics.
enum class SyncScope : uint8_t { None, Cta, Cluster, Gpu, Sys };

/// The state space an address operand is in. `.shared` is recorded as SharedCta (the ISA
/// defines `.shared` as `.shared::cta`); no state space written is Generic.
enum class StateSpace : uint8_t {
  None,          ///< the operation has no such operand
  Generic,
  SharedCta,
  SharedCluster,
  Global,
  Local,
  Param,
  Const,
  Tmem,          ///< tensor memory, for tcgen05 addresses
};

/// How completion of an async operation is observed.
enum class CompletionMechanism : uint8_t {
  None,
  MbarrierCompleteTx, ///< .mbarrier::complete_tx::bytes
  MbarrierArriveOne,  ///< .mbarrier::arrive::one (tcgen05.commit)
  BulkGroup,          ///< .bulk_group (cp.async.bulk.commit_group / wait_group)
};

/// Load modes of tensor copies.
enum class TensorLoadMode : uint8_t {
  None,
  Tile,          ///< `.tile`, also when no mode is written
  TileGather4,
  TileScatter4,
  Im2col,
  Im2colW,
  Im2colW128,
  Im2colNoOffs,
};

/// tcgen05.mma `.kind::*`.
enum class MmaKind : uint8_t { None, F16, Tf32, F8f6f4, I8, Mxf8f6f4, Mxf4, Mxf4nvf4 };

/// Reduction operations of bar.red, cp.reduce.async.bulk, atom, red and tcgen05.ld.red.
enum class ReductionOp : uint8_t {
  None, Popc, And, Or, Xor, Add, Inc, Dec, Min, Max, Cas, Exch,
};

/// Named operands. A record lists the roles its form has, in operand order.
enum class OperandRole : uint8_t {
  None,
  // mbarrier
  Barrier,         ///< [addr] of the mbarrier object (also [mbar] of async copies)
  Count,           ///< arrival count: init's expected count, arrive's decrement
  TxBytes,         ///< bytes expect_tx raises or complete_tx lowers the tx-count by
  State,           ///< the state token an arrive returns (may be the sink `_`)
  StateToken,      ///< the state token a token wait waits on
  Parity,          ///< the phase parity a .parity wait waits on
  SuspendTimeHint, ///< try_wait's time limit in nanoseconds
  WaitComplete,    ///< the predicate a wait writes: true once the phase has completed
  PendingCount,    ///< mbarrier.pending_count's result
  // Copies
  Dst,             ///< destination address
  Src,             ///< source address
  Size,            ///< bytes of a non-tensor bulk copy
  TensorMap,       ///< `[tensorMap, tensorCoords]`; tensorMap() and coords() pick its parts
  Im2colInfo,      ///< `{...}`: im2col offsets, or the im2col::w halo and offset
  CtaMask,         ///< 16-bit mask of the cluster's CTAs a multicast reaches
  CachePolicy,     ///< 64-bit L2 cache policy
  ByteMask,        ///< 16-bit byte mask of cp.async.bulk .cp_mask
  CopySize,        ///< cp.async's cp-size (4, 8 or 16 bytes)
  SrcSize,         ///< cp.async's src-size or ignore-src predicate
  WaitN,           ///< wait_group N: how many newest groups may stay in flight
  // Named and cluster barriers, elect
  BarrierId,       ///< named barrier 0..15
  ThreadCount,     ///< threads the named barrier waits for (all of the CTA when absent)
  RedPredicate,    ///< the predicate bar.red reduces ({!}c)
  RedResult,       ///< bar.red's result (popc count or predicate)
  MemberMask,      ///< lanes taking part in elect.sync / bar.warp.sync
  ElectedLane,     ///< elect.sync's lane result (may be `_`)
  IsElected,       ///< elect.sync's predicate: true in the one elected lane
  // setmaxnreg, mapa, clusterlaunchcontrol
  RegCount,        ///< setmaxnreg's immediate register count
  MappedAddress,   ///< mapa's result: the address in the target CTA
  Address,         ///< mapa's source address; a memory access's address; fence's [addr]
  TargetRank,      ///< mapa's target CTA rank in the cluster
  Response,        ///< try_cancel's 16-byte response buffer
  // tcgen05
  Columns,         ///< TMEM columns of alloc/dealloc
  TmemAddrDst,     ///< shared address that receives the TMEM address of alloc
  TmemAddr,        ///< a TMEM address: dealloc, ld, st, cp, shift
  DTmem,           ///< tcgen05.mma's accumulator in TMEM
  ADesc,           ///< shared-memory matrix descriptor of A
  ATmem,           ///< A in TMEM (tcgen05.mma)
  AFragment,       ///< A in registers (wgmma)
  BDesc,           ///< shared-memory matrix descriptor of B
  InstrDesc,       ///< tcgen05.mma's 32-bit instruction descriptor
  EnableInputD,    ///< tcgen05.mma's predicate: accumulate into D (false: overwrite)
  ScaleInputD,     ///< tcgen05.mma's immediate D scale
  DisableOutputLane, ///< tcgen05.mma's vector of lanes not to write
  ScaleATmem,      ///< block-scale factors of A in TMEM
  ScaleBTmem,      ///< block-scale factors of B in TMEM
  SparseMeta,      ///< sparsity metadata (TMEM for tcgen05, a register for wgmma)
  SparseSelector,  ///< wgmma.sp's sparsity selector
  ZeroColumnMask,  ///< tcgen05.mma.ws's zero-column-mask descriptor
  SourceDesc,      ///< tcgen05.cp's shared-memory source descriptor
  HalfSplitOffset, ///< tcgen05.ld/st .16x32bx2's immediate offset
  ReduceValue,     ///< tcgen05.ld.red's reduced value
  // wgmma
  Accumulators,    ///< wgmma's D registers
  ScaleD,          ///< wgmma's predicate: accumulate into D (false: D = A*B)
  ImmScaleA,
  ImmScaleB,
  ImmTransA,
  ImmTransB,
  // Memory accesses
  Data,            ///< value(s) loaded, stored or exchanged (registers or a vector)
  Data2,           ///< atom.cas's second value
  Result,          ///< atom's returned old value
};

//===- The record ----------------------------------------------------------------===//

/// One decoded synchronization instruction.
class SyncOp {
public:
  /// At most this many named operands (tcgen05.mma.sp.block_scale has eight, wgmma.sp ten).
  static constexpr unsigned MaxRoles = 12;

  SyncKind Kind = SyncKind::Exit;
  MemorySemantics Sem = MemorySemantics::None;
  SyncScope Scope = SyncScope::None;
  /// The state space of the main address operand: the mbarrier of mbarrier ops and of
  /// tcgen05.commit, the address of memory accesses, mapa's space.
  StateSpace Space = StateSpace::None;
  StateSpace DstSpace = StateSpace::None; ///< copies: where the data goes
  StateSpace SrcSpace = StateSpace::None; ///< copies: where it comes from
  CompletionMechanism Completion = CompletionMechanism::None;
  TensorLoadMode LoadMode = TensorLoadMode::None;
  MmaKind Mma = MmaKind::None;
  ReductionOp Reduction = ReductionOp::None;
  uint8_t CtaGroup = 0;     ///< 1 or 2 for `.cta_group::N`, 0 when not written
  uint8_t Dims = 0;         ///< tensor copies: 1 to 5
  uint8_t Repeat = 0;       ///< tcgen05.ld/st `.xN` and ldmatrix/stmatrix `.xN`: N
  uint16_t ShapeM = 0;      ///< wgmma m64nNkK, tcgen05.ld/st 32x32b (32 lanes x 32 bits) ...
  uint16_t ShapeN = 0;
  uint16_t ShapeK = 0;
  uint16_t AccessBytes = 0; ///< bytes a thread moves: ld/st/atom/red/st.async (vector x type)

  bool Multicast = false;      ///< `.multicast::cluster` (try_cancel: `.multicast::cluster::all`)
  bool CacheHint = false;      ///< `.L2::cache_hint`: a CachePolicy operand follows
  bool Aligned = false;        ///< `.aligned`, or a form that is aligned by definition (bar.sync)
  bool ReadOnly = false;       ///< cp.async.bulk.wait_group.read
  bool NoInc = false;          ///< cp.async.mbarrier.arrive.noinc
  bool NoComplete = false;     ///< mbarrier.arrive.noComplete
  bool WaitsOnParity = false;  ///< test_wait/try_wait .parity (else a state token)
  bool Sparse = false;         ///< tcgen05.mma.sp, wgmma.mma_async.sp
  bool WarpSpecialized = false;///< tcgen05.mma.ws
  bool BlockScale = false;     ///< tcgen05.mma .block_scale
  bool Pack16 = false;         ///< tcgen05.ld .pack::16b / tcgen05.st .unpack::16b
  bool Transposed = false;     ///< ldmatrix/stmatrix .trans

  const ptx::Instruction &instruction() const {
    assert(Inst && "record without an instruction");
    return *Inst;
  }
  SyncFamily family() const;
  /// A short printable name: `mbarrier.try_wait.parity`, `cp.async.bulk.tensor.load`.
  llvm::StringRef name() const;

  /// The operand with this meaning; an invalid handle when the form has none.
  ptx::Operand operand(OperandRole Role) const;
  bool has(OperandRole Role) const { return indexOf(Role) >= 0; }
  /// The value of the operand with this meaning when it is written as an integer or a
  /// constant expression (`mbarrier.init [b], 1`); none when absent or in a register.
  std::optional<int64_t> immediate(OperandRole Role) const;
  /// The named operands in operand order.
  unsigned numRoles() const { return NumRoles; }
  OperandRole roleAt(unsigned I) const { return Roles[I].Role; }
  ptx::Operand operandAt(unsigned I) const;

  // The roles most code asks for.
  ptx::Operand barrier() const { return operand(OperandRole::Barrier); }
  ptx::Operand count() const { return operand(OperandRole::Count); }
  ptx::Operand txBytes() const { return operand(OperandRole::TxBytes); }
  ptx::Operand parity() const { return operand(OperandRole::Parity); }
  ptx::Operand stateToken() const { return operand(OperandRole::StateToken); }
  ptx::Operand waitComplete() const { return operand(OperandRole::WaitComplete); }
  ptx::Operand ctaMask() const { return operand(OperandRole::CtaMask); }
  ptx::Operand dst() const { return operand(OperandRole::Dst); }
  ptx::Operand src() const { return operand(OperandRole::Src); }
  ptx::Operand size() const { return operand(OperandRole::Size); }
  ptx::Operand waitN() const { return operand(OperandRole::WaitN); }
  ptx::Operand barrierId() const { return operand(OperandRole::BarrierId); }
  ptx::Operand threadCount() const { return operand(OperandRole::ThreadCount); }
  ptx::Operand columns() const { return operand(OperandRole::Columns); }
  ptx::Operand tmemAddrDst() const { return operand(OperandRole::TmemAddrDst); }
  ptx::Operand regCount() const { return operand(OperandRole::RegCount); }
  ptx::Operand targetRank() const { return operand(OperandRole::TargetRank); }
  /// The tensor map of a tensor copy: the first part of `[tensorMap, tensorCoords]`.
  ptx::Operand tensorMap() const;
  /// The coordinate vector of a tensor copy.
  ptx::Operand coords() const;

  /// Bytes the opcode itself fixes for a complete_tx: 16 for try_cancel, the access size of
  /// st.async / red.async. Copies take theirs from Size or, for tensors, the tensor map.
  std::optional<uint32_t> fixedCompleteTxBytes() const;
  /// Whether the operation is asynchronous: it finishes after the instruction retires.
  bool isAsync() const;

  /// `mbarrier.arrive.expect_tx scope=cta space=shared::cta state=_ barrier=[%r1] txBytes=%r5`
  void print(llvm::raw_ostream &OS) const;

private:
  friend class SyncOpBuilder;
  /// Which part of an operand a role names: elect.sync's `d|p` holds two results.
  enum class Part : uint8_t { Whole, PairFirst, PairSecond };
  struct RoleSlot {
    OperandRole Role;
    uint8_t Index; ///< position in instruction().operands()
    Part Of;
  };
  int indexOf(OperandRole Role) const;

  const ptx::Instruction *Inst = nullptr;
  RoleSlot Roles[MaxRoles] = {};
  uint8_t NumRoles = 0;
};

//===- Decoding ------------------------------------------------------------------===//

/// What decodeSyncOp() made of an instruction.
class SyncDecodeResult {
public:
  enum class Status : uint8_t { NotSync, Decoded, Unrecognized };

  static SyncDecodeResult notSync() { return SyncDecodeResult(); }
  static SyncDecodeResult decoded(const SyncOp &Op);
  /// Reason is a static string; Detail (may be empty) points into the source buffer: the
  /// modifier or operand the reason is about.
  static SyncDecodeResult unrecognized(SyncFamily Family, const char *Reason,
                                       llvm::StringRef Detail = {});

  Status status() const { return St; }
  bool isDecoded() const { return St == Status::Decoded; }
  bool isUnrecognized() const { return St == Status::Unrecognized; }
  bool isNotSync() const { return St == Status::NotSync; }
  /// Decoded or unrecognized: the instruction matters for synchronization either way.
  bool isSyncRelevant() const { return St != Status::NotSync; }
  explicit operator bool() const { return isDecoded(); }

  const SyncOp &op() const {
    assert(isDecoded() && "no record: the instruction was not decoded");
    return Op;
  }
  const SyncOp &operator*() const { return op(); }
  const SyncOp *operator->() const { return &op(); }
  std::optional<SyncOp> asOptional() const {
    return isDecoded() ? std::optional<SyncOp>(Op) : std::nullopt;
  }

  /// The family of a decoded or unrecognized instruction.
  SyncFamily family() const;
  /// Why an unrecognized form is not one the PTX ISA defines; empty otherwise.
  llvm::StringRef reason() const { return Reason ? llvm::StringRef(Reason) : llvm::StringRef(); }
  llvm::StringRef detail() const { return Detail; }
  /// `unrecognized mbarrier form: unknown modifier 'foo'`
  void printReason(llvm::raw_ostream &OS) const;

private:
  SyncOp Op;
  const char *Reason = nullptr;
  llvm::StringRef Detail;
  SyncFamily Family = SyncFamily::Mbarrier;
  Status St = Status::NotSync;
};

/// Decodes one instruction. Cheap enough for every instruction of a large file: it looks at
/// the base name first, and allocates nothing.
SyncDecodeResult decodeSyncOp(const ptx::Instruction &I);

//===- What the reference models do with a record ---------------------------------===//

/// The operation of a reference model (Mbarrier.h, NamedBarrier.h, AsyncGroups.h, Tmem.h)
/// that a record performs, so a replay maps events to model calls without re-decoding.
enum class ModelOp : uint8_t {
  None,
  MbarrierInit,           ///< Mbarrier::init(Count)
  MbarrierInval,          ///< Mbarrier::inval()
  MbarrierArrive,         ///< Mbarrier::arrive(Count, default 1)
  MbarrierArriveDrop,     ///< Mbarrier::arriveDrop(Count, default 1)
  MbarrierExpectTx,       ///< Mbarrier::expectTx(TxBytes)
  MbarrierArriveExpectTx, ///< Mbarrier::arriveExpectTx(TxBytes)
  MbarrierCompleteTx,     ///< Mbarrier::completeTx(bytes)
  MbarrierTestWaitParity, ///< Mbarrier::testWaitParity(Parity)
  /// A wait on a state token: the token names the phase the arrive saw, so the replay tracks
  /// tokens and asks Mbarrier::completedPhases(); the model has no token operation.
  MbarrierTestWaitToken,
  /// cp.async.mbarrier.arrive without .noinc raises the pending count by one when issued, so
  /// its later arrival does not count against the init count. Mbarrier has no such
  /// operation yet; a replay must treat the pair as neutral for the count.
  MbarrierPendingIncrement,
  NamedBarrierArrive,     ///< NamedBarrierFile::arrive(BarrierId, ThreadCount, warp)
  NamedBarrierSync,       ///< NamedBarrierFile::arrive, then wait until passed(Ticket)
  AsyncGroupIssue,        ///< AsyncGroupQueue::issue on the queue named by ModelStep::Queue
  AsyncGroupCommit,       ///< AsyncGroupQueue::commit
  AsyncGroupWait,         ///< AsyncGroupQueue::waitPasses(WaitN, ReadOnly)
  Tcgen05Issue,           ///< Tcgen05CommitTracker::issue
  Tcgen05Commit,          ///< Tcgen05CommitTracker::commit; the arrival is the next step
  TmemAlloc,              ///< TmemAllocator::alloc(Columns)
  TmemDealloc,            ///< TmemAllocator::dealloc(TmemAddr, Columns)
  TmemRelinquish,         ///< TmemAllocator::relinquishPermit()
};

/// Which per-thread queue of AsyncGroups.h an AsyncGroup* step uses.
enum class AsyncQueue : uint8_t { None, Wgmma, BulkStore, CpAsync };

/// When a step happens: as the instruction executes, or when its async work completes.
enum class ModelTiming : uint8_t { AtIssue, OnCompletion };

/// Where a step's amount (count, bytes, N, columns) comes from.
enum class AmountSource : uint8_t {
  None,      ///< the step takes no amount
  Operand,   ///< the operand named by AmountRole
  Constant,  ///< AmountConstant (an absent count means 1; try_cancel completes 16 bytes)
  TensorBox, ///< a tensor copy's box, which the tensor map holds and PTX does not show
  AllThreads, ///< a named barrier without a thread count: every thread of the CTA
};

struct ModelStep {
  ModelOp Op = ModelOp::None;
  AsyncQueue Queue = AsyncQueue::None;
  ModelTiming When = ModelTiming::AtIssue;
  AmountSource Amount = AmountSource::None;
  OperandRole AmountRole = OperandRole::None;
  uint32_t AmountConstant = 0;
  bool ReadOnly = false; ///< AsyncGroupWait of cp.async.bulk.wait_group.read
};

/// The steps of one record, in order (at most two: tcgen05.commit is a commit and, later, an
/// arrival; cp.async.wait_all is a commit and a wait).
class ModelSteps {
public:
  const ModelStep *begin() const { return Steps; }
  const ModelStep *end() const { return Steps + Size; }
  unsigned size() const { return Size; }
  bool empty() const { return Size == 0; }
  const ModelStep &operator[](unsigned I) const {
    assert(I < Size && "model step index out of range");
    return Steps[I];
  }
  void push(const ModelStep &S) {
    assert(Size < 2 && "a record has at most two model steps");
    Steps[Size++] = S;
  }

private:
  ModelStep Steps[2];
  unsigned Size = 0;
};

ModelSteps modelSteps(const SyncOp &Op);

//===- Names ---------------------------------------------------------------------===//

const char *toString(SyncFamily F);
const char *toString(SyncKind K);
const char *toString(MemorySemantics S);
const char *toString(SyncScope S);
const char *toString(StateSpace S);
const char *toString(CompletionMechanism C);
const char *toString(TensorLoadMode M);
const char *toString(MmaKind K);
const char *toString(ReductionOp R);
const char *toString(OperandRole R);
const char *toString(ModelOp Op);
const char *toString(AsyncQueue Q);

} // namespace models
} // namespace wsv
