//===- BarrierTraffic.h - who arrives on and who waits for each mbarrier slot ------===//
//
// The mbarrier checks (and the race checks and the Z3 encoding, which can reuse it) need the
// same facts: for every barrier slot of every CTA of a cluster, which threads arrive on it,
// with what count, how often, which transaction bytes they expect and which async copies
// complete, and which threads wait on it with which parity sequence. The protocol IR states
// these as closed forms in loop iteration numbers and kernel parameters; this file unrolls
// them for concrete parameter values (an Assignment), one CTA rank of the cluster at a time:
//
//   std::vector<Expansion> Es = expandTraffic(P);          // several sampled assignments
//   for (const Expansion &E : Es)
//     for (const SlotTraffic &S : E.Slots)
//       SlotPhases Ph = phasesOf(S);                        // per-phase sums over streams
//
// Counting rules (PTX ISA, "Parallel Synchronization and Communication Instructions:
// mbarrier"):
// - an arrive counts its count operand (1 when absent) once per executing thread; a role's
//   elected lane counts once per warp (ThreadSet::count already does so);
// - a tcgen05.commit with .mbarrier::arrive::one is one arrival per issuing thread, in each
//   CTA of its ctaMask when .multicast::cluster is written;
// - cp.async.mbarrier.arrive.noinc is one arrival per thread; without .noinc the pending count
//   is raised before the arrival, so it does not count towards a phase;
// - an arrive on a `mapa` address lands in the CTA whose rank mapa names (BarrierRef::PeerRank);
// - expect_tx raises the tx-count by its bytes per thread; an async copy with
//   .mbarrier::complete_tx::bytes lowers it by the bytes it writes, in each destination CTA of
//   a multicast, on the peer's barrier for .cta_group::2 copies that name it (the protocol
//   already resolves that to a PeerRank);
// - try_cancel completes 16 bytes.
//
// Streams. The threads that run one arrival or wait in one CTA form a stream (the key is the
// source CTA and the printed thread set, so a prologue's `tid 0` and a role's `tid 0` are the
// same stream). The events of one stream that reach one slot in the same loop iteration are
// one Occurrence: the arrive.expect_tx and the two TMA loads of a k-iteration together
// contribute one phase's share. The model of a correct pipeline is that every arriving stream
// contributes exactly once per phase; phase j is then the j-th occurrence of every stream, and
// SlotPhases sums them. Where that model does not fit, the per-phase sums differ and the
// checks say what they saw.
//
// Waits. A waiter's parity sequence on a slot gives the number of completed phases each wait
// needs: try_wait.parity p succeeds once the current phase parity differs from p, so a first
// wait for parity 1 needs 0 completions, for parity 0 one; each later wait for the other
// parity needs one more (WaitNeeds). A later wait for the same parity as the previous one asks
// for a phase it has already seen or for one two phases on; unless a probe (a non-blocking
// try_wait whose result is kept) explains it, that is a repeated parity.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/Protocol.h"

#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace traffic {

/// Concrete values for the leaves the protocol's closed forms mention.
struct Assignment {
  llvm::StringMap<uint64_t> Params; ///< by PTX parameter name
  unsigned ClusterSize = 1;
  uint64_t NctaidX = 1;             ///< CTAs in the grid's x dimension
  /// `K = 128, M = 512` with the parameters' display names, only those that vary.
  std::string describe(const Protocol &P) const;
};

/// Owner of an occurrence: a role index, or the prologue / epilogue that every role runs.
constexpr unsigned PrologueOwner = 0xfffffff0u;
constexpr unsigned EpilogueOwner = 0xfffffff1u;

/// What one stream's events do to one slot in one loop iteration.
struct Occurrence {
  unsigned FirstEvent = NoIndex;  ///< the first event of the group (into Protocol::Events)
  llvm::SmallVector<unsigned, 4> Events; ///< every event of the group
  unsigned Owner = PrologueOwner;
  uint64_t Seq = 0;         ///< position in the owner's program order, for interleavings
  uint64_t Stamp = 0;       ///< the loop iteration it happened in
  uint64_t Arrivals = 0;    ///< arrivals: lowers the pending count
  uint64_t ExpectBytes = 0; ///< expect_tx bytes: raises the tx-count
  uint64_t CompleteBytes = 0; ///< complete_tx bytes from async copies: lowers the tx-count
  bool hasArrivals() const { return Arrivals != 0; }
};

struct ArriverStream {
  unsigned SourceCta = 0;
  std::string Threads; ///< the printed thread set, the stream's key with SourceCta
  std::vector<Occurrence> Occurrences;
  /// Whether any occurrence arrives (a stream of peer TMA bytes has none).
  bool arrives() const;
};

struct WaitStep {
  unsigned Event = NoIndex;
  unsigned Owner = PrologueOwner;
  uint64_t Seq = 0;
  uint64_t Stamp = 0;    ///< the loop iteration it happened in
  unsigned Parity = 0;
  bool Probe = false;    ///< a non-blocking try_wait / test_wait whose result is kept
  bool Optional = false; ///< its condition could not be evaluated (a peeked result)
};

struct WaiterStream {
  std::string Threads;
  std::vector<WaitStep> Steps;
};

/// One mbarrier: a slot of an array, in one CTA of the cluster.
struct SlotTraffic {
  unsigned Cta = 0, Array = 0, Slot = 0;
  std::vector<ArriverStream> Arrivers;
  std::vector<WaiterStream> Waiters;
  std::vector<std::pair<unsigned, uint64_t>> Inits; ///< init events run on it, with Seq
  /// Arrivals whose condition or count could not be evaluated: the sums below are unknown.
  std::string Unknown;
  unsigned UnknownEvent = NoIndex;
  /// A wait whose parity could not be evaluated: the waiters' needs are unknown.
  std::string WaitUnknown;
  unsigned WaitUnknownEvent = NoIndex;
};

/// The traffic of every slot for one assignment.
struct Expansion {
  Assignment Values;
  std::vector<SlotTraffic> Slots;
  /// Non-empty when the protocol could not be unrolled for these values (an unknown trip
  /// count, slot or condition): Slots is then incomplete and no check may conclude from it.
  std::string Unknown;
  unsigned UnknownEvent = NoIndex; ///< the event the reason is about, when there is one
  /// Arrays an arrival or multicast of which names a CTA outside the cluster: what is
  /// missing there is cluster-multicast-mask's finding, not a count.
  std::set<unsigned> OutsideCluster;
  const SlotTraffic *find(unsigned Cta, unsigned Array, unsigned Slot) const;
};

/// Unrolls the protocol for a set of sampled assignments: each parameter the closed forms
/// mention takes values from 64 to 1024 while the others stay at 512, so the k-loops run 1 to
/// 16 iterations and persistent tile loops several tiles. The grid is one cluster.
std::vector<Expansion> expandTraffic(const Protocol &P);

/// Per-phase sums of a slot's arriving streams (the j-th occurrence of each stream).
struct SlotPhases {
  struct Phase {
    uint64_t Arrivals = 0, ExpectBytes = 0, CompleteBytes = 0;
    bool Complete = true; ///< every stream has a j-th occurrence
  };
  std::vector<Phase> Phases;
  /// Phases every arriving stream contributed to: the completions a waiter can count on
  /// when the per-phase counts match the init.
  uint64_t FullPhases = 0;
};
SlotPhases phasesOf(const SlotTraffic &S);

/// Completed phases a waiter's successive waits need, and the first repeated parity.
struct WaitNeeds {
  std::vector<uint64_t> Need;           ///< per step: completions it waits for
  std::optional<size_t> RepeatedParity; ///< the step that asks for the previous step's parity
  uint64_t last() const { return Need.empty() ? 0 : Need.back(); }
};
WaitNeeds needsOf(const WaiterStream &W);

/// The slot's expected arrivals per phase from the inits: NoIndex-free constant or nullopt.
std::optional<uint64_t> initCount(const Protocol &P, unsigned Array, unsigned Slot);

/// `full[2]`, `mma2ld` (single barriers print without a slot), `in CTA 1` appended when the
/// cluster has more than one CTA.
std::string slotName(const Protocol &P, unsigned Array, unsigned Slot, unsigned Cta);
/// The owner's display name: the role's, `the prologue`, `the epilogue`.
std::string ownerName(const Protocol &P, unsigned Owner);

/// The kinds of barrier use of an array over every expansion: whether async-proxy
/// completions (copies, commits) or peer CTAs reach it.
struct ArrayUse {
  bool AsyncProxy = false;  ///< TMA complete_tx, tcgen05.commit, cp.async arrivals
  bool FromPeers = false;   ///< an arrival or copy from another CTA of the cluster lands on it
  bool TxTraffic = false;   ///< expect_tx or complete_tx bytes
  bool Commits = false;     ///< tcgen05.commit arrivals
};
std::vector<ArrayUse> arrayUses(const Protocol &P, const std::vector<Expansion> &Es);

//===- Problems shared by the mbarrier checks -------------------------------------===//
//
// One buggy barrier usually breaks several counts at once (a missing arriver also makes the
// waiter's need exceed the completions). The checks report the root cause only: each kind has
// a rank, and a check stays silent on an array where a kind ranked before its own was found.

enum class Problem : uint8_t {
  NoArriver,    ///< a waiter needs a phase and nothing arrives on the slot
  ArrivalCount, ///< a phase's arrivals differ from the init count
  TxBytes,      ///< a phase's expected bytes differ from the bytes completed on it
  InitialPhase, ///< two roles that release each other start waiting at the same parity
  PhaseSkip,    ///< a waiter asks for a parity twice, or arrivals lap it by two phases
  TripCount,    ///< a waiter needs more phases than the arrivals complete
};

/// The first phase whose arrivals differ from the slot's init count.
std::optional<size_t> arrivalMismatch(const Protocol &P, const SlotTraffic &S,
                                      const SlotPhases &Ph);
/// Whether the slot's arriving streams take turns rather than share phases: every occurrence
/// arrives with the whole init count and moves no tx bytes, so each completes a phase alone,
/// and the streams run different numbers of them. Triton's attention does this: the MMA warp commits once per key
/// block to the barrier the correction warps wait on, and the softmax warps arrive once more
/// after their loop. Pairing their k-th occurrences into one phase (the model of a pipeline
/// whose arrivers each contribute a share) would count 2 on a barrier of 1. Streams of equal
/// length stay paired: two consumers that each arrive once per stage on a barrier of count 1
/// are the classic surplus.
bool streamsTakeTurns(const SlotTraffic &S, uint64_t Init);
/// The first phase whose expected bytes differ from the bytes completed on it.
std::optional<size_t> txMismatch(const SlotTraffic &S, const SlotPhases &Ph);
/// A waiter that needs a completion on a slot nothing arrives on or completes bytes on.
std::optional<size_t> starvedWaiter(const SlotTraffic &S);

/// A waiter lapped by arrivals from its own role: before its wait Step, the role already
/// filled the slot Completed times although the wait needs only Need completions, so the slot
/// is filled again before the waiter consumed it (By is the fill that does so).
struct Lap {
  size_t Waiter = 0, Step = 0;
  uint64_t Need = 0, Completed = 0;
  const Occurrence *By = nullptr; ///< the occurrence that completed the lapping phase
};
std::optional<Lap> lappedWaiter(const SlotTraffic &S);

/// Two roles that each wait on the array the other arrives on, starting at the same parity.
struct PhasePair {
  unsigned RoleA = 0, RoleB = 0;
  unsigned ArrayA = 0, ArrayB = 0; ///< RoleA waits on ArrayA (arrived on by RoleB), ...
  unsigned EventA = NoIndex, EventB = NoIndex; ///< their first waits
  uint64_t SeqA = 0, SeqB = 0;                 ///< and where they are in program order
  unsigned Parity = 0;
};
/// Roles in Skipping (their phase state skips) are left out: their first waits' parities are
/// no evidence of where they start, and phase-skip reports them.
std::vector<PhasePair> samePhasePairs(const Protocol &P, const Expansion &X,
                                      const std::set<unsigned> &Skipping);

/// Everything the mbarrier checks need, computed once per protocol.
struct TrafficFacts {
  std::vector<Expansion> Expansions;
  std::vector<ArrayUse> Uses;
  /// Per array: the problems seen in any expansion (bit i is Problem i).
  std::vector<unsigned> Problems;
  /// (array, CTA) pairs that receive arrivals or bytes in some expansion: a slot starved
  /// only for some sizes has a count problem, not a missing arriver.
  std::set<std::pair<unsigned, unsigned>> EverArrived;
  /// Per array: the owners (roles, prologue) whose events arrive on it.
  std::map<unsigned, std::set<unsigned>> ArrivingOwners;
  /// Roles that ask for a parity twice in a row on some slot: their stage and phase state
  /// is broken, and what their arrivals then miss downstream is the same bug.
  std::set<unsigned> PhaseSkipOwners;
  /// Whether the arrivals on Array come from a role whose phase state skips.
  bool downstreamOfPhaseSkip(unsigned Array) const {
    auto It = ArrivingOwners.find(Array);
    if (It == ArrivingOwners.end())
      return false;
    for (unsigned O : It->second)
      if (PhaseSkipOwners.count(O))
        return true;
    return false;
  }
  /// Arrays whose arriving streams take turns in some expansion (streamsTakeTurns): per-phase
  /// sums of their k-th occurrences say nothing about them, in any expansion (with one
  /// iteration the streams are of equal length and the sum looks like a surplus).
  std::set<unsigned> TurnTaking;
  /// The slot's phases, what every check compares: one per occurrence of every stream on a
  /// TurnTaking array, else phasesOf(S).
  SlotPhases phases(const SlotTraffic &S) const;
  /// Arrays that some arrival or multicast misses because it names a CTA outside the cluster.
  std::set<unsigned> OutsideCluster;
  /// Whether a problem ranked before K was found on Array.
  bool outranked(unsigned Array, Problem K) const {
    unsigned Mask = (1u << static_cast<unsigned>(K)) - 1;
    return Array < Problems.size() && (Problems[Array] & Mask) != 0;
  }
};
/// The facts of a protocol; computed on the first call and reused while the same protocol
/// (file, kernel, event places) is asked about again on this thread.
const TrafficFacts &analyzeTraffic(const Protocol &P);

/// When no sampled assignment could be unrolled, says so once as a remark of the running
/// check (what it could not decide and why) and returns true: the check has nothing to add.
bool remarkIfUndecided(CheckContext &Ctx, const TrafficFacts &F, llvm::StringRef What);

} // namespace traffic
} // namespace analyzer
} // namespace wsv
