//===- Protocol.h - the synchronization protocol of a kernel, as plain data -------===//
//
// What wsv understood a kernel's synchronization to be, in the terms its author used: roles
// (sets of threads, counted exactly) that each run a structured sequence of events (barrier
// inits, arrivals with counts, expect_tx bytes, waits with parity expressions, async copies
// with bytes and the barrier they complete on, commits, MMA issues reading stage buffers,
// named and cluster barriers, fences, TMEM allocation, ...), nested in loops with symbolic
// trip counts; a prologue before the roles split and an epilogue after they join; and the
// barrier arrays and shared-memory buffers those events name.
//
// Everything the later layers need is here and nothing is hidden behind methods: lint checks
// walk Roles and Events, the Z3 encoding turns loops and events into a transition system, a
// simulator replays events on the reference models of models/. Values are closed-form
// expressions in the loops' iteration numbers and the kernel's parameters (Expr.h), owned by
// the analysis the Protocol keeps alive. What the analysis could not resolve is an explicit
// unknown with the reason (ProtocolValue::Unknown, BarrierRef::Unresolved, EventKind::Unknown,
// Protocol::Notes), never left out.
//
// Items of a sequence refer to events and loops by index, so one event (a CTA-wide barrier in
// a loop every role runs) can appear in several roles' sequences.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/ExprNames.h"
#include "wsv/analyzer/Loops.h"
#include "wsv/analyzer/ThreadSet.h"
#include "wsv/models/SyncOp.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

class FunctionAnalysis;

/// A value of the protocol: its closed form, or why there is none.
struct ProtocolValue {
  const Expr *E = nullptr;
  std::string Unknown; ///< why E is missing; empty when E is set or the value is absent

  static ProtocolValue of(const Expr *E) { return ProtocolValue{E, {}}; }
  static ProtocolValue unknown(std::string Reason) { return ProtocolValue{nullptr, Reason}; }
  bool known() const { return E != nullptr; }
  /// Neither a value nor a reason: the operand does not exist for this event.
  bool absent() const { return !E && Unknown.empty(); }
  std::optional<uint64_t> constant() const {
    return E && E->isConstant() ? std::optional<uint64_t>(E->payload()) : std::nullopt;
  }
};

/// A position in the CUDA (or other) source, from `.loc`.
struct CudaFrame {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Function; ///< the inlined function's name, when the frame is inside one
};

/// Where an event or loop comes from.
struct SourceRef {
  unsigned PtxLine = 0;
  unsigned PtxColumn = 0;
  std::vector<CudaFrame> Cuda; ///< the inlining chain, innermost first; empty without .loc
  /// The deepest frame in the file of the outermost frame: the line of the kernel's own
  /// source that leads to the event (rather than the line inside a wrapper header).
  const CudaFrame *kernelFrame() const;
};

//===- Barriers and buffers -------------------------------------------------------===//

enum class NameOrigin : uint8_t {
  Symbol,   ///< the PTX symbol, demangled (`_ZZ...E7tma2mma` is tma2mma)
  Usage,    ///< from how the roles use it (full: TMA completes on it; empty: the producer waits)
  Fallback, ///< numbered
};
const char *toString(NameOrigin O);

/// An array of mbarriers in shared memory: `full[4]`, or a single barrier (Slots == 1).
struct BarrierArray {
  std::string Name;
  NameOrigin NameFrom = NameOrigin::Fallback;
  std::string Symbol;         ///< the PTX symbol of the base; empty when the base is computed
  const Expr *Base = nullptr; ///< the base address (a symbol, or an aligned dynamic base)
  int64_t Offset = 0;         ///< bytes from Base to slot 0
  uint64_t Stride = 8;        ///< bytes between slots
  unsigned Slots = 1;
  enum class SlotsOrigin : uint8_t { Declaration, Accesses, Single } SlotsFrom = SlotsOrigin::Single;
  /// Expected arrivals per phase, per slot, from the inits; unknown with the reason when no
  /// init was found or its count is not a constant.
  std::vector<ProtocolValue> InitCounts;
  std::vector<unsigned> InitEvents; ///< events that initialize slots of this array
};

/// A barrier operand resolved to a slot of an array.
struct BarrierRef {
  unsigned Array = NoIndex;   ///< into Protocol::Barriers; NoIndex when unresolved
  ProtocolValue Slot;         ///< the slot index, closed form (0 for a single barrier)
  ProtocolValue PeerRank;     ///< set for a peer CTA's barrier (mapa): the CTA's rank
  const Expr *Address = nullptr; ///< the address as the analysis computed it
  std::string Unresolved;     ///< why Array is NoIndex
  bool resolved() const { return Array != NoIndex; }
  bool present() const { return Address || !Unresolved.empty(); }
};

/// Shared memory that async copies fill or drain, in slots: the A tiles of a 4-stage ring.
struct Buffer {
  std::string Name;
  std::string Symbol;
  const Expr *Base = nullptr;
  int64_t Offset = 0;      ///< bytes from Base to slot 0
  uint64_t Stride = 0;     ///< bytes between slots (0 for one slot)
  unsigned Slots = 1;
  /// Bytes from the start of a slot to the next buffer found in the same memory: what a
  /// copy into it can write at most. Unknown when nothing follows it.
  std::optional<uint64_t> SlotBytes;
};

struct BufferRef {
  unsigned Buffer = NoIndex;  ///< into Protocol::Buffers; NoIndex when unresolved
  ProtocolValue Slot;
  int64_t ByteOffset = 0;     ///< bytes into the slot where the constant part of the access lands
  /// What else moves the access inside the slot (a CTA rank, a thread's row); absent if nothing.
  ProtocolValue InSlot;
  const Expr *Address = nullptr;
  std::string Unresolved;
  /// Unresolved, yet at a place of a buffer that async copies fill or drain: an access no
  /// slot holds in full (what moves it inside the slot is not bounded), which stage safety
  /// cannot check (unplacedAccesses).
  unsigned InRegionOf = NoIndex;
  /// The word tcgen05.alloc writes the TMEM address into (then Unresolved says so).
  bool AllocWord = false;
  bool resolved() const { return Buffer != NoIndex; }
  bool present() const { return Address || !Unresolved.empty(); }
};

//===- Events ---------------------------------------------------------------------===//

enum class EventKind : uint8_t {
  Init,          ///< mbarrier.init: Barrier, Count
  Inval,         ///< mbarrier.inval
  Arrive,        ///< mbarrier.arrive{_drop}: Barrier, Count (1 when absent)
  ArriveExpectTx, ///< mbarrier.arrive.expect_tx: Barrier, TxBytes (and Count)
  ExpectTx,      ///< mbarrier.expect_tx: Barrier, TxBytes
  CompleteTx,    ///< mbarrier.complete_tx: Barrier, TxBytes
  Wait,          ///< a blocking wait (a try_wait spin loop): Barrier, Parity
  Probe,         ///< one non-blocking try_wait / test_wait whose result is used later
  AsyncLoad,     ///< TMA / bulk copy into shared memory: Dst, Barrier (complete_tx), Bytes
  AsyncStore,    ///< TMA / bulk copy from shared memory to global: Src, Bytes
  AsyncCopy,     ///< sm_80 cp.async into shared memory: Dst
  CpAsyncArrive, ///< cp.async.mbarrier.arrive{.noinc}: Barrier
  MmaCommit,     ///< tcgen05.commit: Barrier, multicast CtaMask
  Mma,           ///< wgmma.mma_async / tcgen05.mma: Reads (A, B stage buffers)
  WgmmaFence,
  GroupCommit,   ///< wgmma / cp.async.bulk / cp.async commit_group
  GroupWait,     ///< wait_group N: WaitN
  TmemLoad,      ///< tcgen05.ld
  TmemStore,     ///< tcgen05.st / tcgen05.cp / tcgen05.shift (Detail: st, cp, shift)
  TmemWait,      ///< tcgen05.wait::ld / ::st
  SmemRead,      ///< ld.shared / ldmatrix: Src
  SmemWrite,     ///< st.shared / stmatrix / atomics on shared memory: Dst
  /// The first instruction after a wgmma operation, commit or wait (on some path) that reads
  /// registers a wgmma.mma_async writes (its accumulators), other than a wgmma or a mov:
  /// Accumulators
  AccumulatorRead,
  NamedBarrier,  ///< bar.sync / bar.arrive / bar.red: Named
  WarpSync,      ///< bar.warp.sync
  ClusterArrive, ///< barrier.cluster.arrive
  ClusterWait,   ///< barrier.cluster.wait
  Fence,         ///< fence.proxy.async, fence.mbarrier_init, tcgen05.fence, membar, ...
  Alloc,         ///< tcgen05.alloc: Columns
  Dealloc,       ///< tcgen05.dealloc: Columns
  Relinquish,    ///< tcgen05.relinquish_alloc_permit
  Setmaxnreg,    ///< setmaxnreg.inc / .dec: RegCount
  TryCancel,     ///< clusterlaunchcontrol.try_cancel: Barrier (16 bytes)
  Exit,          ///< exit / ret / trap before the end of the kernel
  Unknown,       ///< a synchronization instruction or call wsv cannot model: Reason
};
const char *toString(EventKind K);

/// Where an async copy's byte count comes from.
enum class BytesOrigin : uint8_t {
  None,            ///< the event moves no bytes
  Operand,         ///< written in the instruction (bulk copies)
  Fixed,           ///< fixed by the opcode (try_cancel's 16-byte response)
  TensorBox,       ///< the tensor map's box, from the kernel's launch description
  AllocationBound, ///< at most the buffer's slot, or up to the barriers after it (the box
                   ///< is not known; slotBounded tells which)
  BarrierExpect,   ///< the bytes the barrier it alone completes expects, fewer than the
                   ///< bytes up to the barriers after its buffer (the box is not known)
  Unknown,
};
const char *toString(BytesOrigin O);

struct NamedBarrierRef {
  ProtocolValue Id;
  ProtocolValue Threads; ///< absent: every thread of the CTA
};

struct Event {
  EventKind Kind = EventKind::Unknown;
  std::optional<models::SyncKind> Sync; ///< the decoded instruction, when it was decoded
  InstId Inst = NoIndex;
  std::string Opcode; ///< the PTX opcode as written
  SourceRef Where;
  /// The threads of one CTA that execute it (elected lanes count one per warp).
  ThreadSet Threads;
  /// The CTA-uniform condition under which it runs, beyond its enclosing loop's or role's
  /// (`k != 0`, `K / 64 % 2 == 1`, `%cluster_ctarank == 0`); absent when it always runs.
  ProtocolValue When;

  BarrierRef Barrier;
  ProtocolValue Count;   ///< init: expected arrivals; arrive: arrivals (1 when not written)
  ProtocolValue TxBytes; ///< expect_tx bytes (complete_tx for CompleteTx)
  ProtocolValue Parity;  ///< Wait / Probe: the phase parity waited for
  ProtocolValue Token;   ///< Wait / Probe on a state token instead of a parity
  ProtocolValue Bytes;   ///< async copies: bytes written per CTA (see BytesFrom)
  BytesOrigin BytesFrom = BytesOrigin::None;
  BufferRef Dst;         ///< where a copy or a shared-memory write lands
  BufferRef Src;         ///< what a TMA store or a shared-memory read reads
  std::vector<BufferRef> Reads; ///< Mma: the stage buffers its descriptors point into
  NamedBarrierRef Named;
  ProtocolValue WaitN;    ///< GroupWait: groups that may stay in flight
  ProtocolValue Columns;  ///< Alloc / Dealloc
  ProtocolValue RegCount; ///< Setmaxnreg
  ProtocolValue CtaMask;  ///< multicast copies and commits: the CTAs of the cluster reached
  bool Multicast = false;
  uint8_t CtaGroup = 0;   ///< `.cta_group::N`, 0 when not written
  bool Increase = false;  ///< Setmaxnreg: .inc (else .dec)
  bool ReadOnly = false;  ///< GroupWait: wait_group.read
  /// Mma (wgmma): the accumulators it writes; AccumulatorRead: those it reads. One bit per
  /// destination register vector of the function's wgmma.mma_async instructions (the last
  /// bit also stands for any beyond 31).
  uint32_t Accumulators = 0;
  /// Mma (tcgen05), TmemLoad and tcgen05.st: the column of the accumulator it writes or the
  /// tensor memory it reads or stores to (the low 16 bits of the TMEM address, the address
  /// tcgen05.alloc wrote counted as 0); absent where the address does not derive from that
  /// one.
  ProtocolValue TmemColumn;
  /// Mma (tcgen05): the accumulator's columns (N of its instruction descriptor); TmemLoad
  /// and tcgen05.st: the columns it reads or writes (from its shape and .num). 0: not known.
  uint32_t TmemColumns = 0;
  /// Probe: it only decides whether the Wait on the same phase right after it runs, and
  /// that Wait is taken to run always (ProtocolProbes.cpp says why that is exact).
  bool FastPath = false;
  std::string Detail;     ///< a few words of the opcode: `m64n128k16`, `2d`, `proxy.async`
  std::string Reason;     ///< Unknown: why it cannot be modeled
};

//===- Structure -------------------------------------------------------------------===//

struct ProtocolItem {
  enum class Kind : uint8_t { Event, Loop } K = Kind::Event;
  unsigned Index = 0; ///< into Protocol::Events or Protocol::Loops
  static ProtocolItem event(unsigned I) { return {Kind::Event, I}; }
  static ProtocolItem loop(unsigned I) { return {Kind::Loop, I}; }
  bool isEvent() const { return K == Kind::Event; }
  bool isLoop() const { return K == Kind::Loop; }
};

/// A loop as one role sees it (the same PTX loop may appear in several roles).
struct ProtocolLoop {
  LoopId Loop = NoIndex;
  std::string Var;            ///< the name its iteration number prints as (`k`)
  ProtocolValue Trip;         ///< body iterations per entry, closed form
  /// What must hold for Trip to be exact (K >= 64 for a do-while over K / 64 tiles), and
  /// whether a branch before the loop already established it.
  std::vector<std::pair<const Expr *, bool>> TripConditions;
  /// Where this holds the loop never ends (TripCount::Forever); nullptr: never.
  const Expr *Forever = nullptr;
  ProtocolValue When;         ///< condition for entering it, beyond the enclosing item's
  SourceRef Where;            ///< the header
  std::vector<ProtocolItem> Body;
};

/// A role: the threads that run one sync skeleton.
struct Role {
  std::string Name;        ///< producer, consumer, mma, writeback, idle, ... or roleN
  bool NamedByActivity = true;
  ThreadSet Threads;       ///< every thread of the role
  /// The threads that run the role's own events (not those every role runs): one elected
  /// lane for a producer whose warp does nothing else.
  ThreadSet Active;
  ProtocolValue When;      ///< CTA-uniform condition common to all its work (a CTA rank)
  std::vector<ProtocolItem> Body;
};

/// A note on something the analysis could not resolve for the whole kernel.
struct ProtocolNote {
  std::string Message;
  SourceRef Where; ///< PtxLine 0 when it is about no particular line
};

struct Protocol {
  std::string Kernel;              ///< the entry's name
  std::string File;                ///< the PTX file
  LaunchShape Launch;              ///< block size and cluster size thread sets were counted in
  std::string LaunchFrom;          ///< `.reqntid`, `.maxntid`, `wsv_kernel_info`, or an assumption
  /// Where Launch.ClusterSize came from: `.reqnctapercluster`, the launch (`--cluster-size`, a
  /// launch description) or `wsv_kernel_info`; empty where nothing states it (1 is assumed,
  /// and a kernel that reaches its cluster's peers gets a note saying so).
  std::string ClusterFrom;
  std::vector<std::string> ParamNames;   ///< display names of the parameters, by index
  std::vector<std::string> ParamSymbols; ///< their PTX names (`h2_bf16_param_6`)
  std::vector<std::string> LoopVars;     ///< display names of iteration numbers, by LoopId
  /// Per LoopId: a bound on its iterations when a constant gives one (a prefill of
  /// min(K / 64, 4) k-tiles runs at most 4), else UINT64_MAX. Sampling stays inside it.
  std::vector<uint64_t> MaxIterations;
  std::vector<BarrierArray> Barriers;
  std::vector<Buffer> Buffers;
  std::vector<Event> Events;
  std::vector<ProtocolLoop> Loops;
  /// Before the roles split: barrier inits, TMEM allocation, CTA/cluster syncs.
  std::vector<ProtocolItem> Prologue;
  std::vector<Role> Roles;
  /// After the roles join again: the shared writeback, the syncs before dealloc.
  std::vector<ProtocolItem> Epilogue;
  std::vector<ProtocolNote> Notes;

  /// The analyses the expressions live in; kept alive with the protocol.
  std::shared_ptr<FunctionAnalysis> Analysis;

  /// simplifyInvariants' answers by expression and assumption. Printing a protocol asks for
  /// the same trip counts and steps once per operation that shows them, and one answer costs
  /// up to a third of a second of sampling on a kernel with long closed forms (H6, where the
  /// listing took three minutes). Shared by copies, which share the expressions too.
  struct SimplifiedForms {
    std::mutex Lock;
    llvm::DenseMap<std::pair<const Expr *, const Expr *>, const Expr *> Forms;
    /// The shorter form of each part of them (itself where none was found): parts recur
    /// across the listing, and each costs samples and a Z3 query.
    llvm::DenseMap<std::pair<const Expr *, const Expr *>, const Expr *> Parts;
  };
  std::shared_ptr<SimplifiedForms> Simplified = std::make_shared<SimplifiedForms>();

  const Event &event(const ProtocolItem &I) const { return Events[I.Index]; }
  const ProtocolLoop &loop(const ProtocolItem &I) const { return Loops[I.Index]; }
  /// The display name of a loop's iteration number, or "i<loop>".
  std::string loopVar(LoopId L) const;
  /// Prints an expression with loop variables and parameters by their display names.
  void printExpr(const Expr *E, llvm::raw_ostream &OS) const;
  /// printExpr's text; Compact drops the spaces (`(k+3)%4`). A text longer than
  /// LongExpression characters names its recurring subterms ($1, ...) and lists them after
  /// it, `... (where $1 = ...)`; while SharedNames is set, the long expressions of a whole
  /// listing are counted into it (before its choose) or printed with its names (after).
  std::string exprString(const Expr *E, bool Compact = false) const;
  static constexpr size_t LongExpression = 160;
  mutable ExprNames *SharedNames = nullptr;
  /// What SharedNames' term N stands for, printed with the other names.
  std::string namedTermDefinition(const Expr *N) const;
  /// Bytes from the start of barrier array A to Address (a closed form), when that is one
  /// constant: a plain store into a barrier's memory.
  std::optional<int64_t> offsetIntoBarrier(unsigned A, const Expr *Address) const;
  /// Calls F on every event of a sequence, loops included, with the loops around it.
  void forEachEvent(const std::vector<ProtocolItem> &Items,
                    const std::function<void(const Event &,
                                             llvm::ArrayRef<const ProtocolLoop *>)> &F) const;
};

/// For a copy whose bytes are an AllocationBound: whether the bound is its buffer slot's
/// size (false: the bytes up to the barriers after a buffer of unknown size).
bool slotBounded(const Protocol &P, const Event &E);

/// The shared-memory reads and writes that land in a buffer async copies fill or drain at a
/// place no slot holds in full (BufferRef::InRegionOf), described with their PTX lines: the
/// model does not follow them, so no race on them is found, and a proof of stage safety
/// does not cover them.
std::vector<std::string> unplacedAccesses(const Protocol &P);

} // namespace analyzer
} // namespace wsv
