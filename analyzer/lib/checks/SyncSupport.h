//===- SyncSupport.h - what the barrier, TMEM, cluster and alignment checks share -===//
//
// The checks of named barriers (barrier-divergent, named-barrier-count,
// named-barrier-id-collision), of warp- and warpgroup-wide instructions (aligned-divergent,
// setmaxnreg-nonuniform, tcgen05-alloc-lane-guard), of TMEM lifetime and of clusters all ask
// the same questions of the protocol: where an event sits (prologue, which role, epilogue),
// which threads execute it and whether they cover whole warps or warpgroups, what a
// thread-dependent operand (`bar.sync %tid.x / 128 + 10`) is for each thread, how large a
// cluster is and who said so. The answers live here once.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/Protocol.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace checks {

/// Where an event runs: before the roles split, inside a role, or after they join.
enum class Part : uint8_t { Prologue, Role, Epilogue };

/// One place an event occupies in the protocol's structure.
struct EventSite {
  const Event *E = nullptr;
  unsigned Index = 0; ///< into Protocol::Events
  Part In = Part::Prologue;
  const Role *R = nullptr; ///< the role for Part::Role
  /// Position in a walk of prologue, roles (in order) and epilogue: sites of one sequence
  /// compare in program order.
  unsigned Order = 0;
  llvm::SmallVector<const ProtocolLoop *, 2> Loops; ///< enclosing loops, outermost first
};

/// Every event of the protocol with its place; an event that several roles run appears once
/// per role.
std::vector<EventSite> eventSites(const Protocol &P);

/// The threads a set may contain (members, every candidate of an election, the threads of
/// conditional groups as if their condition held), over the launch's block.
llvm::BitVector possibleThreads(const ThreadSet &T);
/// `tid 0..127 (128 threads)`, `tid 0, 32, 64, 96 (4 threads)`, ...; without the count in
/// parentheses when WithCount is false.
std::string describeThreads(const llvm::BitVector &Threads, bool WithCount = true);
/// Threads of one CTA a set stands for: elected lanes count one each, conditional groups
/// as if their condition held. std::nullopt when the set is unknown.
std::optional<unsigned> threadCount(const ThreadSet &T);

/// Why a thread set does not cover whole groups of Granule threads (32: a warp, 128: a
/// warpgroup): the first group it covers only in part. Empty when it covers whole groups.
/// A set that is unknown gives its reason through Unknown instead.
struct Coverage {
  std::string Partial; ///< `lanes 0..0 of warp 0 (1 of 32 threads)`; empty when uniform
  std::string Unknown; ///< why it cannot be told
  bool uniform() const { return Partial.empty() && Unknown.empty(); }
};
Coverage coverage(const ThreadSet &T, unsigned Granule);

/// The value of E in thread Tid of a CTA of the launch (thread ids and lane are known, CTA
/// and cluster positions are not); std::nullopt when E depends on anything else.
std::optional<uint64_t> valueInThread(const Expr *E, unsigned Tid, const LaunchShape &L);

/// How many CTAs a cluster has, and from where; Known is false when neither the PTX nor a
/// launch description says (then a single CTA is not proven either).
struct ClusterShape {
  unsigned Size = 1;
  bool Known = false;
  std::string From; ///< `.reqnctapercluster`, `wsv_kernel_info`
};
ClusterShape clusterShape(const Protocol &P);

/// How many CTAs of this kernel one SM can hold at most, from the block size (2048 threads
/// per SM), the 32-CTA limit and shared memory (228 KB per SM of sm_90/sm_100, 1 KB of it
/// reserved per CTA): static `.shared` declarations plus the dynamic bytes a launch
/// description asks for. Registers are not known before ptxas, so this is an upper bound.
struct Residency {
  unsigned MaxCtas = 1;
  std::string Why; ///< `2 by shared memory (99 KB per CTA)`
};
Residency residentCtas(const Protocol &P);

/// The source position of an instruction of the protocol's function.
SourceRef sourceOf(const Protocol &P, InstId I);
/// The instruction that last wrote the register operand Role of the event's instruction, in
/// its block or the single-predecessor blocks before it (`mov.u32 %r346, 256` before
/// `bar.sync %r345, %r346`): compilers attribute it to the source line the value comes
/// from. std::nullopt when the operand is not a register or no writer is found nearby.
std::optional<SourceRef> operandSource(const Protocol &P, const Event &E, models::OperandRole Role);

/// The nearest branch above the event (in its dominators) whose condition depends on the
/// thread or lane id: the guard that decides which threads of a warp run it.
std::optional<SourceRef> threadGuard(const Protocol &P, const Event &E);

/// Where threads leave the kernel normally (`ret`, `exit` of the entry itself), in PTX order.
std::vector<SourceRef> kernelExits(const Protocol &P);
/// The last instruction of each path into a kernel exit (the branch that leaves a role's
/// code for the shared `ret`): nvcc gives it the line where the kernel body ends, which is
/// where a missing trailing barrier belongs. In PTX order.
std::vector<SourceRef> pathsIntoExits(const Protocol &P);

/// `ptx 62` (or `b3_tirx_step7.cu:193, ptx 853` when the event has a CUDA line).
std::string at(const SourceRef &S);

/// Adds a note at a related instruction.
void note(Finding &F, std::string Message, const SourceRef &Where);

/// Instructions that must be executed by every thread of a warp (`.sync.aligned`) or of a
/// warpgroup (wgmma, setmaxnreg): the granule in threads, or 0 when it is not aligned.
unsigned alignedGranule(const Event &E);
/// tcgen05 operations that read or write TMEM (ld, st, cp, shift, mma, commit of MMAs).
bool usesTmem(const Event &E);
/// Events that move data between CTAs of a cluster or signal a peer's barrier.
bool crossesCtas(const Event &E);
/// A CTA-wide barrier every thread of the CTA executes (`bar.sync 0` with no count, or a
/// `barrier.cluster.wait`).
bool isCtaWideSync(const Protocol &P, const Event &E);

/// For each site (in Sites order), a key that names the CTA-wide barrier it is, or nothing
/// when it is none: two sites with one key complete together. An aligned barrier every
/// thread executes is its own instruction; `barrier.sync a` without .aligned pairs with any
/// other such `barrier.sync a`, so those share a key when together every thread reaches one.
std::vector<std::optional<uint64_t>> ctaBarrierKeys(const Protocol &P,
                                                    const std::vector<EventSite> &Sites);

/// One use of a named barrier id by the threads for which the operand is that id.
struct NamedBarrierUse {
  const EventSite *Site = nullptr;
  uint64_t Id = 0;
  std::optional<uint64_t> Count; ///< threads the instruction waits for; nullopt: all
  llvm::BitVector Threads;       ///< the threads of this use
  /// Some threads run it only when a value that is not a thread id (or an election) says
  /// so: Threads is then the most that can come.
  bool Conditional = false;
};
/// Named-barrier events whose ids and counts could not be resolved per thread, with why.
struct UnresolvedBarrier {
  const EventSite *Site = nullptr;
  std::string Reason;
};
struct NamedBarrierUses {
  std::vector<NamedBarrierUse> Uses;
  std::vector<UnresolvedBarrier> Unresolved;
};
/// Splits every named-barrier event by the id each of its threads passes. Events that
/// several roles share are counted once.
NamedBarrierUses namedBarrierUses(const Protocol &P, const std::vector<EventSite> &Sites);

} // namespace checks
} // namespace analyzer
} // namespace wsv
