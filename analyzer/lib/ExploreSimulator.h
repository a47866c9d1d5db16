//===- ExploreSimulator.h - one state of a protocol instance and its transitions --===//
//
// The explorer and the replay share this: a State (program counters, the models' barrier and
// queue objects, operations in flight) and the transitions out of it. Private to analyzer/lib.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Explore.h"
#include "wsv/models/AsyncGroups.h"
#include "wsv/models/NamedBarrier.h"
#include "wsv/models/Tmem.h"

#include "llvm/ADT/BitVector.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace wsv {
namespace analyzer {
namespace exploration {

/// A TMA load (or try_cancel response) in flight.
struct LoadInFlight {
  unsigned Agent = 0, Step = 0, Copy = 0;
  friend bool operator<(const LoadInFlight &A, const LoadInFlight &B) {
    return std::tie(A.Agent, A.Step, A.Copy) < std::tie(B.Agent, B.Step, B.Copy);
  }
  friend bool operator==(const LoadInFlight &A, const LoadInFlight &B) {
    return A.Agent == B.Agent && A.Step == B.Step && A.Copy == B.Copy;
  }
};

/// A state's key: variable-length integers, so that the many zeros and small counts take a
/// byte each (keys are hashed, compared and stored for every state). Every field is a whole
/// number of integers and every list is counted, so concatenations stay unambiguous.
class KeyWriter {
public:
  // The bytes are written through a pointer into storage kept a varint ahead of the end:
  // a check per value instead of one per byte (keys took a fifth of a search's work).
  KeyWriter() { Bytes.resize_for_overwrite(Bytes.capacity()); }
  void put(uint64_t V) {
    if (LLVM_UNLIKELY(Bytes.size() - Len < MaxVarint))
      Bytes.resize_for_overwrite(2 * Bytes.size());
    char *P = Bytes.data() + Len;
    while (V >= 0x80) {
      *P++ = static_cast<char>(V | 0x80);
      V >>= 7;
    }
    *P++ = static_cast<char>(V);
    Len = static_cast<size_t>(P - Bytes.data());
  }
  void putSigned(int64_t V) { put(uint64_t(V) << 1 ^ uint64_t(V >> 63)); }
  /// A list of small numbers, counted.
  void putList(llvm::ArrayRef<uint32_t> List) {
    put(List.size());
    for (uint32_t V : List)
      put(V);
  }
  void append(const KeyWriter &O) {
    if (Bytes.size() - Len < O.Len + MaxVarint)
      Bytes.resize_for_overwrite(std::max(2 * Bytes.size(), Len + O.Len + MaxVarint));
    std::memcpy(Bytes.data() + Len, O.Bytes.data(), O.Len);
    Len += O.Len;
  }
  llvm::StringRef bytes() const { return llvm::StringRef(Bytes.data(), Len); }
  void clear() { Len = 0; }

private:
  static constexpr size_t MaxVarint = 10; ///< bytes of the longest uint64_t
  llvm::SmallVector<char, 256> Bytes;     ///< written up to Len, the rest room to write
  size_t Len = 0;
};

/// Reads back what a KeyWriter wrote.
class KeyReader {
public:
  explicit KeyReader(llvm::StringRef Bytes) : Bytes(Bytes) {}
  uint64_t get() {
    uint64_t V = 0;
    for (unsigned Shift = 0;; Shift += 7) {
      uint8_t B = static_cast<uint8_t>(Bytes[Pos++]);
      V |= uint64_t(B & 0x7f) << Shift;
      if (!(B & 0x80))
        return V;
    }
  }
  int64_t getSigned() {
    uint64_t V = get();
    return static_cast<int64_t>(V >> 1) ^ -static_cast<int64_t>(V & 1);
  }
  bool done() const { return Pos == Bytes.size(); }

private:
  llvm::StringRef Bytes;
  size_t Pos = 0;
};

struct AgentState {
  uint32_t Pc = 0;
  /// A bar.sync / barrier.cluster.wait after its arrival: the instance it waits for.
  bool Arrived = false;
  uint64_t Ticket = 0;
  /// barrier.cluster.arrive's instance, for the wait that follows.
  bool ClusterArrived = false;
  uint64_t ClusterTicket = 0;
  models::AsyncGroupQueue Wgmma, Bulk;
  /// sm_80 cp.async copies in flight: each lands (fills what it writes) when a
  /// cp.async.wait_group of the agent retires it, or at the end.
  models::AsyncGroupQueue CpAsync;
  models::Tcgen05CommitTracker Tcgen05;
  /// tcgen05.commit by lanes other than the one that issued the MMAs (a seeded bug's whole
  /// warp): each tracks nothing of its own thread, yet its arrival is as asynchronous as any
  /// commit's and lands apart from the others', in any order. Per commit step, the arrivals
  /// still due; sorted by step. The reduction's walk counts them as operations in flight;
  /// their landings are never taken alone.
  llvm::SmallVector<std::pair<uint32_t, uint32_t>, 1> LoneCommits;
  /// Per probe flag (ConcreteStep::Flag): the last probe saw its phase complete; a wait
  /// that reads the flag clears it.
  uint32_t Probed = 0;
  /// The buffer instances the agent wrote through the generic proxy (st.shared, stmatrix)
  /// since its last fence.proxy.async, of those the async proxy reads: 2 * instance, plus 1
  /// where the write was to the agent's own part of the slot (ConcreteStep::PerCopy).
  /// Sorted.
  llvm::SmallVector<uint32_t, 2> Unfenced;
  /// The barrier instances the agent initialized since its last fence.mbarrier_init: the
  /// async proxy and peer CTAs may not see those inits yet. Sorted.
  llvm::SmallVector<uint32_t, 2> Unpublished;
  /// Periodic systems: passes of the agent's cycle completed.
  uint32_t Laps = 0;
  /// Persistent periodic systems: inner cycles left so far (the tile it is in, counted over
  /// every pass of the outer cycle) and passes of the current one completed.
  uint32_t Occurrence = 0, InnerLaps = 0;
  /// Bit R: a tcgen05.ld of the agent may still read the columns TmemRegions[R] of its CTA
  /// (no tcgen05.wait::ld since), which a tcgen05.mma must not overwrite yet.
  uint32_t TmemLoading = 0;
  /// The same for the agent's tcgen05.st writes until its tcgen05.wait::st.
  uint32_t TmemStoring = 0;
};

/// Whether an agent has begun its current step: arrived at the bar.sync it now waits at.
inline bool begun(const AgentState &A) { return A.Arrived; }

/// Adds V to a sorted list of distinct values (AgentState::Unfenced, Unpublished).
inline void insertSorted(llvm::SmallVectorImpl<uint32_t> &List, uint32_t V) {
  auto It = std::lower_bound(List.begin(), List.end(), V);
  if (It == List.end() || *It != V)
    List.insert(It, V);
}

struct State {
  std::vector<AgentState> Agents;
  std::vector<models::Mbarrier> Barriers;
  std::vector<models::NamedBarrierFile> Named; ///< per CTA
  models::NamedBarrier Cluster;
  std::vector<models::TmemAllocator> Tmem; ///< per CTA
  /// Per CTA: allocations (first column, columns) in order, for the dealloc that frees them.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> TmemAllocs;
  std::vector<LoadInFlight> Loads;         ///< sorted
  llvm::BitVector Filled; ///< per buffer instance: something wrote it (keys read its words)
  /// Periodic systems: the passes after which every agent with a cycle leaves it, once the
  /// first agent left (-1 before). All agents run the same trip count.
  int64_t ExitLaps = -1;
  /// Persistent periodic systems: per inner-cycle occurrence (a tile) that an agent left,
  /// the passes every agent runs in it; sorted by occurrence.
  std::vector<std::pair<uint32_t, uint32_t>> InnerExits;
  /// Merged systems: the exit (ConcreteAgent::Exits) every agent leaves the tile loop at,
  /// once the first left (-1 before).
  int32_t TailExit = -1;
  /// An exit inside the cycle (ConcreteAgent::Exit::InCycle): the passes its first leaver
  /// had completed, which every agent leaves after.
  uint32_t TailLaps = 0;

  /// The whole state as integers, and back: the explorer keeps the states waiting to be
  /// expanded packed (a few hundred bytes instead of kilobytes and dozens of allocations).
  void save(KeyWriter &Out) const;
  void load(llvm::StringRef Bytes);
};

/// What a transition did beyond moving the state.
struct Outcome {
  enum class Kind : uint8_t { Ok, Race, Violation } K = Kind::Ok;
  std::string Message;
  unsigned Buffer = NoIndex;
  ScheduleStep With; ///< race: the other side
  bool UnpublishedInit = false; ///< violation: an init no fence.mbarrier_init made visible
  /// Violation: the barrier a copy or arrival reached after its CTA exited.
  unsigned LateBarrier = NoIndex;
  /// Violation: that was a copy's or a commit's landing (RolePrograms::LateLandingsDropped).
  bool LateLanding = false;
  /// The check of DESIGN.md's catalog whose bug this is the symptom of (`smem-raw-wait`),
  /// where one is: `wsv explain` names it with its fix; "" where none fits.
  const char *Check = "";
};

/// Replay's record of the steps so far, for the misuses whose check they decide
/// (ExploreMisuse.cpp).
class MisuseHistory {
public:
  explicit MisuseHistory(const ConcreteSystem &S)
      : S(S), ArrivedInPhase(S.Barriers.size()), Phases(S.Barriers.size()) {}
  /// Names O's check where the steps Before T tell it (before observe(T)).
  void classify(Outcome &O, llvm::ArrayRef<ScheduleStep> Before, const ScheduleStep &T) const;
  /// Records T, which led to St.
  void observe(const State &St, const ScheduleStep &T);

private:
  /// The barrier T arrives on with an mbarrier.arrive, or NoIndex.
  unsigned arrivalTarget(const ScheduleStep &T) const;
  const ConcreteSystem &S;
  /// Per barrier, the arrivals (agent, step) of its current phase.
  std::vector<std::vector<std::pair<unsigned, unsigned>>> ArrivedInPhase;
  std::vector<uint64_t> Phases;
};

class Simulator {
public:
  /// IgnoreRaces: races are not outcomes (see the member).
  explicit Simulator(const ConcreteSystem &S, bool IgnoreRaces = false);

  State initial() const;
  /// Transitions enabled in St, in a fixed order; with Reduce, a single local step when one
  /// is enabled.
  std::vector<ScheduleStep> enabled(const State &St, bool Reduce) const;
  /// The same with a hint for the reduction: the landings in Late are tried alone only after
  /// every agent's step (not at all when one is taken alone), and Stale receives the landings
  /// not taken alone here, checked or not. The explorer passes a state's Stale on as Late to
  /// the state one step taken alone leads to: a landing that did not commute mostly still
  /// does not after one more step, and finding that out walks everything that may come first.
  /// Which commuting transition goes alone changes which states are expanded, never what
  /// they lead to.
  std::vector<ScheduleStep> enabled(const State &St, bool Reduce,
                                    llvm::ArrayRef<LoadInFlight> Late,
                                    std::vector<LoadInFlight> &Stale) const;
  /// Also the completions a schedule may take one operation at a time (replay).
  bool isEnabled(const State &St, const ScheduleStep &T) const;
  /// A canonical encoding for hashing. For a periodic system it leaves out what grows
  /// without bound but cannot change what happens next: completed phases beyond their parity,
  /// named-barrier instances beyond the ones agents wait for, passes beyond the differences
  /// between agents.
  /// Written into K, which is cleared first (the search reuses one writer: a key outgrows
  /// the writer's inline bytes).
  void key(const State &St, KeyWriter &K) const;
  /// Symmetry (the explorer turns it on with the partial-order reduction): copies of a role
  /// in one CTA (the consumer warpgroups) that run the same steps, each on named barriers
  /// of its own, are interchangeable: swapping two of them, with their named barriers, maps
  /// every state to one with the same future up to the swap, so key() sorts each group and
  /// the search visits one state of each class (ExploreSymmetry.cpp says why that is sound
  /// next to the reduction). Returns the number of groups found.
  unsigned useSymmetry();
  /// The largest difference between the passes two agents with cycles have completed.
  uint32_t lag(const State &St) const;
  /// Applies an enabled transition. Executing the last step of a cycle: Copy bit 0 clear runs
  /// the cycle again, set leaves it (only while no agent left yet; afterwards the agent
  /// leaves after the passes the first one ran, whatever the Copy); bit 1 likewise for an
  /// inner cycle (a tile's k-loop).
  Outcome apply(State &St, const ScheduleStep &T) const;
  bool finished(const State &St) const;
  /// Set: races are not outcomes; the step that makes one goes on as if it did not
  /// (ExploreOptions::StopAtRace). Synchronization does not read the data a race corrupts,
  /// so what only races read (the TMEM columns tcgen05.ld and tcgen05.st still use) is
  /// neither kept in the state nor part of the footprints.
  const bool IgnoreRaces;
  /// The check of DESIGN.md's catalog that misuse V of Barrier is the symptom of.
  const char *barrierCheck(const State &St, unsigned Barrier, models::MbarrierViolation V) const;
  /// Every unfinished agent and what it waits for.
  std::vector<BlockedAgent> blocked(const State &St) const;
  /// Per transition of Schedule (one of S, taken from the initial state; IgnoreRaces as
  /// set), whether it is private: an agent's step, not one that may block, touching nothing
  /// that a step of an agent that may run at the same time (not one that starts after it
  /// finished or finished before it started; for a cluster's prologue before its
  /// barrier.cluster.arrive, only the other prologues) or the completion of work such an
  /// agent or an earlier one issued (a copy landing, tcgen05 work) touches; a wait_group
  /// touches what the operations it may retire read.
  /// Then it commutes with every transition that may come before its agent's next one
  /// (ExploreFold.cpp). All false for a schedule that is not one of S.
  std::vector<bool> privateTransitions(llvm::ArrayRef<ScheduleStep> Schedule) const;

private:
  /// key()'s normalization of passes and tiles (Fewest, First, Least: see there).
  struct KeyShift {
    uint32_t Fewest = 0, First = 0, Least = 0;
  };
  void putAgent(KeyWriter &K, const State &St, unsigned Agent, const KeyShift &Shift) const;
  /// Each symmetry group's members (their agent records and their own named barriers), in
  /// sorted order.
  void putGroups(KeyWriter &K, const State &St, const KeyShift &Shift) const;
  struct SymmetryGroup {
    std::vector<unsigned> Agents;
    /// Per member, its named barrier ids, in the order of the first member's.
    std::vector<std::vector<uint32_t>> Ids;
  };
  std::vector<SymmetryGroup> Groups;
  std::vector<unsigned> GroupOf;         ///< per agent: its group (NoIndex: none); empty: off
  std::vector<std::vector<bool>> Owned;  ///< per CTA, per named id: a group member's own
  /// Per CTA: the named barrier ids its agents' steps use, ascending (key() writes those).
  std::vector<llvm::SmallVector<uint32_t, 4>> NamedUsed;
  bool started(const State &St, unsigned Agent) const;
  /// Every agent of the CTA finished: its shared memory and barriers are gone.
  bool exited(const State &St, unsigned Cta) const;
  /// Whether a landing reaches Barrier: not where its CTA exited and the run drops such
  /// landings (RolePrograms::LateLandingsDropped).
  bool landsAt(const State &St, unsigned Barrier) const {
    return !S.Programs || !S.Programs->LateLandingsDropped ||
           !exited(St, S.Barriers[Barrier].Cta);
  }
  /// A violation when step C (executed by T, or landing: a copy's or a commit's arrival)
  /// reaches a barrier of another CTA that exited.
  Outcome afterExit(const State &St, const ConcreteStep &C, const ScheduleStep &T,
                    bool Lands) const;
  /// Completions of wgmma, bulk-store and tcgen05 operations that may be taken in St.
  /// Lazy: lone commits land only where a step that comes next observes them.
  void completions(const State &St, std::vector<ScheduleStep> &Out, bool Eager,
                   bool Lazy = true) const;
  /// Whether a step that comes next in St reads or changes Barrier, or ends its CTA: where
  /// a lone commit's landing on it may make a difference (completions).
  bool landingObserved(const State &St, unsigned Barrier) const;
  bool stepEnabled(const State &St, unsigned Agent) const;
  /// The last step of a cycle, with no agent gone yet: it may run the cycle again or leave.
  bool atFreeLapEnd(const State &St, unsigned Agent) const;
  bool mayLeave(const State &St, unsigned Agent) const;
  void endOfPass(State &St, unsigned Agent, bool Leave) const;
  /// Inner cycles: the one whose last step is the agent's next (-1: none), whether the
  /// agent's tile has no pass count yet, and whether it may fix it now.
  int innerEnd(const State &St, unsigned Agent) const;
  const std::pair<uint32_t, uint32_t> *innerExit(const State &St, uint32_t Occurrence) const;
  bool atFreeInnerEnd(const State &St, unsigned Agent) const;
  bool mayLeaveInner(const State &St, unsigned Agent) const;
  /// Ends a pass of inner cycle I; true when the agent runs it again.
  bool endOfInnerPass(State &St, unsigned Agent, int I, bool Leave) const;
  /// The choices (ScheduleStep::Copy) of executing the agent's next step: bit 0 leaves the
  /// outer cycle, bit 1 the inner one, where the step ends a pass that is free to end. The
  /// choice LeaveTiles alone is not the step but leaving the tile loop before it.
  std::vector<unsigned> choices(const State &St, unsigned Agent) const;
  /// Agents with inner cycles.
  std::vector<unsigned> InnerAgents;
  /// The agents whose free pass ends are never taken alone (commutes): one with a cycle,
  /// one with inner cycles (chooseAnchors says which).
  unsigned LapAnchor = NoIndex, InnerAnchor = NoIndex;
  void chooseAnchors();
  /// Per agent, per step: the inner cycle it ends (-1: none).
  std::vector<std::vector<int>> InnerEndAt;
  /// Merged systems (ConcreteAgent::Exits): per agent, per step (and one past the last),
  /// the exit at it (-1: none), and whether reaching it finishes the agent (the end of the
  /// main steps or of a block after an exit).
  std::vector<std::vector<int>> ExitAt;
  std::vector<std::vector<bool>> FinishAt;
  bool Merged = false;
  /// The agent's exit at its next step that it may take now: the one every agent leaves at
  /// once fixed, or any while none is fixed and no agent went past it (-1: none).
  int exitNow(const State &St, unsigned Agent) const;
  /// While no exit is fixed: the first exit no agent went past (those after it are open).
  int firstOpenExit(const State &St) const;
  /// While no exit is fixed: whether exit I, inside the cycle, is open in pass Laps (no
  /// agent went past it: into a later pass, further in that one, or out of the cycle).
  bool cycleExitOpen(const State &St, int I, uint32_t Laps) const;
  /// Whether an agent that completed Laps passes may leave at exit I: the one fixed (in
  /// the pass fixed, inside the cycle), or while none is, one inside the cycle no agent went
  /// past or one outside it from FirstExit (firstOpenExit) on.
  bool exitOpen(const State &St, int I, uint32_t Laps, int FirstExit) const;
  /// The steps after exit I for an agent leaving it after Laps passes, [first, end).
  std::pair<uint32_t, uint32_t> exitBlock(unsigned Agent, int I, uint32_t Laps) const;
  /// Per exit index: whether it lies inside the cycle (the same for every agent with exits).
  std::vector<bool> ExitInCycle;
  /// Leaving the tile loop at exit I (a transition of its own: ScheduleStep::Copy LeaveTiles).
  void leaveTiles(State &St, unsigned Agent, int I) const;
  /// Whether the agent's step at Pc is its last (it finishes after it).
  bool lastStep(unsigned Agent, uint32_t Pc) const {
    return Pc + 1 >= S.Agents[Agent].Steps.size() || FinishAt[Agent][Pc + 1];
  }
  bool Periodic = false;
  std::string waitReason(const State &St, unsigned Agent) const;
  /// A tcgen05.mma in flight that writes TMEM columns Read reads in CTA Cta (its own, or
  /// the pair's with .cta_group::2): the step that issued it.
  std::optional<ScheduleStep> tmemWriter(const State &St, unsigned Cta,
                                         const ConcreteStep &Read) const;
  /// An agent of CTA Cta (or, with Pair, of the other CTA of its pair) whose tcgen05.ld
  /// (Kind TmemRead) or tcgen05.st (TmemWrite) may still touch a region of Mask: that step,
  /// the agent's last of the kind before its position.
  std::optional<ScheduleStep> tmemPending(const State &St, unsigned Cta, bool Pair,
                                          uint32_t Mask, StepKind Kind) const;
  /// `columns 0 to 255` of an MMA, tcgen05.ld or tcgen05.st.
  static std::string columns(const ConcreteStep &C);
  /// The TMEM side of step C of Agent (a tcgen05.mma's issue, tcgen05.ld, tcgen05.st and
  /// their waits): its races, and what it leaves reading or writing (ExploreTmem.cpp).
  Outcome tmemAccess(State &St, unsigned Agent, const ConcreteStep &C) const;
  Outcome execute(State &St, unsigned Agent, unsigned Choice = 0) const;
  Outcome complete(State &St, const ScheduleStep &T) const;
  /// Races of a read (Write false) or write of buffer slot B by step T.
  Outcome checkAccess(const State &St, unsigned B, bool Write, bool Async,
                      const ScheduleStep &T) const;
  Outcome arrive(State &St, unsigned Barrier, uint32_t Count, const ScheduleStep &T) const;
  /// A violation when What (the async proxy's complete_tx or commit, or a peer's arrival)
  /// reaches Barrier before a fence.mbarrier_init published its init.
  Outcome unpublished(const State &St, unsigned Barrier, const std::string &What,
                      const ScheduleStep &T) const;

  /// The partial-order reduction: the objects (barrier and buffer instances, named
  /// barriers, the cluster barrier, TMEM, each agent's queues) a step or its async operation
  /// touches; a step whose objects nothing that may run before it touches (no operation in
  /// flight, no step another agent may reach without this agent moving first) commutes with
  /// everything that may run before it and is taken alone (a stubborn set of one step).
  using Footprint = std::vector<uint64_t>;
  Footprint footprint(unsigned Agent, const ConcreteStep &C) const;
  /// Per barrier instance: every arrival it gets is the same operation (ArrivalsAlike).
  void findAlikeArrivals();
  std::vector<bool> ArrivalsAlike;
  /// The threads a phase of the cluster barrier waits for (its arrive steps' count).
  uint64_t ClusterCount = 0;
  /// What a step (or the copy it issues) brings toward completing barrier phases: arrivals
  /// (barrier instance, count) and byte counts.
  struct Enabling {
    llvm::SmallVector<std::pair<unsigned, uint32_t>, 2> Arrivals;
    llvm::SmallVector<std::pair<unsigned, uint64_t>, 2> Bytes; ///< complete_tx of copies
    /// expect_tx: the barrier and the bytes it waits for more
    llvm::SmallVector<std::pair<unsigned, uint64_t>, 2> Expects;
    /// Arrivals that bring no expect_tx (plain arrive, tcgen05.commit): a phase they
    /// complete needs no more bytes than it waits for now.
    llvm::SmallVector<std::pair<unsigned, uint32_t>, 2> Plain;
  };
  Enabling enables(const ConcreteStep &C) const;
  /// Whether something that may happen before the transition (a step of Agent, or Load's
  /// completion; NoIndex / nullptr: neither) touches Mine.
  bool touchedFirst(const State &St, unsigned Agent, const LoadInFlight *Load,
                    const Footprint &Mine, unsigned Landed = NoIndex,
                    unsigned Completing = NoIndex) const;
  /// touchedFirst's shortcut: no step any other agent has left (every pass of its cycles
  /// included) touches Mine, nor may a CTA that Mine reaches exit first. Then no walk can
  /// find a conflict, and most transitions that commute are of this kind.
  bool touchesNoFuture(const State &St, unsigned Agent, const Footprint &Mine) const;
  /// Whether the completion of Agent's oldest tcgen05 commit (every operation it waits
  /// for; the commits due then arrive) commutes with everything that may happen first.
  bool tcgen05Commutes(const State &St, unsigned Agent) const;
  /// Into F: what Agent's tcgen05 work in flight touches until it completes: what it reads,
  /// and arrivals on the barriers of the commits pending (a later commit is a step).
  void tcgen05InFlight(const State &St, unsigned Agent, Footprint &F) const;
  /// Whether a transition with footprint Mine and one with F may not commute. Inline: the
  /// reduction's walks ask it for nearly every step they pass.
  bool conflicts(const Footprint &Mine, const Footprint &F) const {
    // Writes conflict with everything, reads with writes and updates, updates (alike
    // arrivals, fills) with writes and reads: a wait may pass or not, a read may race or
    // not.
    const uint64_t *M = Mine.data(), *O = F.data();
    for (unsigned W = 0; W < Words; ++W) {
      uint64_t Write = O[W], Read = O[Words + W], Update = O[2 * Words + W];
      if ((M[W] & (Write | Read | Update)) || (M[Words + W] & (Write | Update)) ||
          (M[2 * Words + W] & (Write | Read)))
        return true;
    }
    return false;
  }
  /// touchedFirst's and commutes' working space, kept between calls (they run in nearly
  /// every state; one simulator serves one search, on one thread).
  struct TouchScratch {
    Footprint Mine, Copy;
    std::vector<uint32_t> Arrivals, Plain;
    std::vector<uint64_t> LeastExpect;
    std::vector<uint64_t> Bytes, FutureLandings;
    /// A copy's landing (touchedFirst's Load): what may reach its barriers first, as
    /// (barrier, arrivals, bytes expected, bytes landing).
    struct Contribution {
      unsigned Barrier;
      uint32_t Arrivals;
      uint64_t Expected, Landing;
    };
    std::vector<Contribution> BeforeLanding;
    std::vector<bool> Expect, Ends;
    /// What an agent's walk did so far that decides which waits it passes next.
    struct WalkContext {
      /// Per barrier it passed waits on: the fewest of its phases (after the state's) that
      /// must have completed for the agent to get there.
      llvm::SmallVector<std::pair<unsigned, uint32_t>, 4> Phases;
      /// The last probe of each flag it ran, with the phases of its barrier needed then.
      struct Probe {
        int8_t Flag;
        uint32_t Pc, Phases;
      };
      llvm::SmallVector<Probe, 1> Probes;
      uint32_t Cleared = 0; ///< flags a wait of the walk read (and cleared)
      uint32_t Laps = 0;    ///< passes of the outer cycle it ran beyond the agent's
    };
    /// A wait a walk stopped at, with what the walk did up to there.
    struct Stop {
      uint32_t Pc;
      WalkContext Done;
    };
    std::vector<llvm::SmallVector<Stop, 1>> Stops;
    /// Per agent, per step: the generation of the last call that walked it.
    std::vector<std::vector<uint32_t>> Walked;
    /// Per plain run: the generation of the last call that entered it, and where it
    /// entered first (a later entry at or after that point has been walked).
    std::vector<uint32_t> RunWalked, RunEntry;
    uint32_t Generation = 0;
  };
  mutable TouchScratch Scratch;
  /// The tx byte counts of the copies in flight to Barrier.
  std::vector<uint64_t> landingSizes(const State &St, unsigned Barrier) const;
  /// Whether some of the copies (Sizes), not none and not all, sum to Tx.
  static bool someLandingsSum(const std::vector<uint64_t> &Sizes, int64_t Tx);
  /// Whether an arrive.expect_tx commutes with the landings of the copies in flight to its
  /// barrier (touchedFirst's Landed then leaves them out).
  bool expectCommutesWithLandings(const State &St, const ConcreteStep &C) const;
  /// A copy's completion that commutes with everything that may happen before it.
  bool loadCommutes(const State &St, const LoadInFlight &L) const;
  /// Whether the phase of barrier X may complete before the copy L lands, or (its landing
  /// included) with only some of what reaches X first (TouchScratch::BeforeLanding): then
  /// the order decides which phase something is counted in.
  bool landingOrderMatters(const State &St, const LoadInFlight &L, unsigned X) const;
  /// A footprint is 3 * Words words at the same bit positions: objects written, objects only
  /// read (buffers read, barriers waited on), objects given updates that commute with each
  /// other (arrivals on a barrier whose arrivals are all alike, TMA fills of a slot).
  void add(Footprint &F, unsigned Bit) const { F[Bit / 64] |= uint64_t(1) << (Bit % 64); }
  void addRead(Footprint &F, unsigned Bit) const {
    F[Words + Bit / 64] |= uint64_t(1) << (Bit % 64);
  }
  void addUpdate(Footprint &F, unsigned Bit) const {
    F[2 * Words + Bit / 64] |= uint64_t(1) << (Bit % 64);
  }
  /// An arrival on barrier B: an update when all its arrivals are alike, else a write.
  void addArrival(Footprint &F, unsigned B) const {
    if (ArrivalsAlike[B])
      addUpdate(F, B);
    else
      add(F, B);
  }
  /// Drops Bit from the footprint: from its writes only, or (Every) from every kind.
  void clear(Footprint &F, unsigned Bit, bool Every = false) const {
    for (unsigned K = 0; K < (Every ? 3u : 1u); ++K)
      F[K * Words + Bit / 64] &= ~(uint64_t(1) << (Bit % 64));
  }
  /// Whether Agent's transitions may be taken alone: its step, and (AtExit) leaving the
  /// tile loop at the exit open there; at the end of a pass, with every choice.
  bool commutes(const State &St, unsigned Agent, bool AtExit) const;
  /// Whether Agent starts only once Before finished (the roles after their CTA's
  /// prologue, the epilogue after the CTA's other agents).
  bool follows(unsigned Agent, unsigned Before) const;
  /// Per agent: the agents it follows (started() asks on every step of a search).
  std::vector<llvm::SmallVector<unsigned, 4>> Predecessors;
  /// Whether Agent finishing may start another agent, end its CTA or let its work in
  /// flight complete (its last step then never goes alone).
  bool finishMatters(const State &St, unsigned Agent) const;
  /// Buffer accesses in footprints. Copies of one role (agents of one program in one CTA)
  /// reach their own parts of a slot when either access is placed by the thread (the race
  /// check's rule): such an access touches the agent's part bit and those of the agents that
  /// are not its siblings; any other access touches the whole slot and every part.
  enum class Touch : unsigned { Write = 0, Read = 1, Update = 2 };
  void touchBuffer(Footprint &F, unsigned Buffer, unsigned Agent, bool Part, Touch How) const;
  /// Per buffer instance: the agents with accesses placed by the thread, and the bit of the
  /// first one's part (NoIndex: none).
  std::vector<llvm::SmallVector<unsigned, 4>> PartAgents;
  std::vector<unsigned> PartBase;

  const ConcreteSystem &S;
  unsigned Words = 0;
  /// Bit positions: barrier instances, buffer slots, named barriers, the cluster barrier,
  /// TMEM, each agent's queues, per CTA whether it is alive (reaching its barriers from
  /// elsewhere reads it; its exit, when every one of its agents may finish first, writes
  /// it), whether an open exit of a merged system is left (steps past an exit read it,
  /// leaving there alone writes it: commutes()), and the parts of slots (PartBase).
  /// TmemAccBase + CTA * TmemRegions.size() + R: whether a tcgen05.mma in flight writes the
  /// columns TmemRegions[R] of the CTA's tensor memory; TmemLdBase and TmemStBase + the
  /// same: whether a tcgen05.ld still reads them, a tcgen05.st still writes them
  /// (tmemFootprint). The regions are the MMAs' distinct column ranges.
  unsigned TmemAccBase = 0, TmemLdBase = 0, TmemStBase = 0;
  std::vector<std::pair<uint32_t, uint32_t>> TmemRegions;
  /// Per agent: the regions its tcgen05.ld and tcgen05.st steps touch (what its wait::ld
  /// and wait::st end).
  std::vector<uint32_t> TmemReadRegions, TmemWriteRegions;
  /// Finds the regions and places their bits from Bits on (constructor).
  void initTmem(unsigned &Bits);
  /// The regions that columns [First, End) overlap, a bit each.
  uint32_t tmemRegions(uint32_t First, uint32_t End) const;
  /// Adds the regions Mask of CTA Cta, from Base, to F as reads or updates.
  void touchTmem(Footprint &F, unsigned Base, unsigned Cta, uint32_t Mask, bool Read) const;
  /// Adds what TMEM step C of Agent touches to F.
  void tmemFootprint(Footprint &F, unsigned Agent, const ConcreteStep &C) const;
  unsigned NamedBase = 0, ClusterBit = 0, TmemBase = 0, QueueBase = 0, AliveBase = 0,
           ExitBit = 0;
  /// Per agent, per program counter: the union of the footprints of the steps from there on.
  std::vector<std::vector<Footprint>> Suffix;
  /// Per agent, per program counter: the barrier instances the steps from there on (the
  /// whole cycle inside one) bring arrivals or bytes to.
  std::vector<std::vector<Footprint>> EnablingSuffix;
  /// The same where the agent's tcgen05 work in flight completes next (touchedFirst's
  /// Completing): a tcgen05.commit it issues later arrives from the issuing lane only once
  /// that work is done, so what it brings first is its other lanes' arrivals (CommitLate).
  std::vector<std::vector<Footprint>> EnablingSuffixLate;
  std::vector<std::vector<Enabling>> CommitLate;
  /// Per agent, per step: its footprint and what it brings to barrier phases.
  std::vector<std::vector<Footprint>> StepFootprint;
  std::vector<std::vector<Enabling>> StepEnabling;
  /// Runs of plain steps, which a walk passes whatever the state (not a wait, a copy, a
  /// cluster arrival or the end of a pass): touchedFirst takes a run in one go. Per agent,
  /// per step: its run (NoIndex: not plain), where the run ends, the union of the
  /// footprints from the step to the run's end, and the next step of the run at or after it
  /// that brings arrivals or bytes (the run's end: none).
  void findPlainRuns();
  std::vector<std::vector<uint32_t>> RunOf, RunEnd, NextEnabling;
  std::vector<std::vector<Footprint>> RunUnion;
  unsigned Runs = 0;
  /// Per buffer instance: a TMA store or an MMA reads it (through the async proxy).
  std::vector<bool> AsyncRead;
  /// Per buffer instance: the other instances of its CTA whose bytes overlap its own (a
  /// ring's first stage reused as the epilogue's staging tile): a generic write (st.shared,
  /// stmatrix) to one fills them. A copy's landing does not: a TMA store of a tile that only
  /// a TMA load of the ring wrote sends the ring's data out, which is not what a kernel
  /// means to do, and "read before anything filled it" then says so.
  std::vector<llvm::SmallVector<unsigned, 2>> Aliases;
  /// Per agent: the agents of its CTA whose threads it continues, and whose wgmma, bulk-store
  /// and cp.async groups its wait_group therefore waits for too: for the epilogue, the roles
  /// and the prologue; for a role of every thread of the CTA, the prologue.
  std::vector<llvm::SmallVector<unsigned, 4>> Joined;
  void findAliases();
  /// The agent's group queue of a commit or wait step.
  static models::AsyncGroupQueue &queue(AgentState &AS, AsyncQueue Q);
  static const models::AsyncGroupQueue &queue(const AgentState &AS, AsyncQueue Q) {
    return queue(const_cast<AgentState &>(AS), Q);
  }
  /// A wait_group's effect on the agent's queue and those of the agents it continues
  /// (cp.async copies it retires land).
  void retire(State &St, unsigned Agent, const ConcreteStep &Wait) const;
  /// The agent's cp.async copies that were in flight (Before) and no longer are land: what
  /// they write is filled.
  void landCopies(State &St, unsigned Agent, llvm::ArrayRef<uint32_t> Before) const;
  /// Per agent: the buffer instances of AsyncRead its generic writes reach, which its
  /// fence.proxy.async publishes (the fence's footprint), and whether every such write was
  /// to the agent's own part of the slot.
  std::vector<std::vector<std::pair<unsigned, bool>>> Fenced;
  /// Per agent: the barrier instances it initializes, which its fence.mbarrier_init
  /// publishes (the fence's footprint).
  std::vector<std::vector<unsigned>> Inits;
};

/// Whether two lists of blocked agents name the same agents, at the same steps, for the
/// same reasons (a reordered schedule must end as the one it came from).
bool sameBlocked(const std::vector<BlockedAgent> &A, const std::vector<BlockedAgent> &B);

} // namespace exploration
} // namespace analyzer
} // namespace wsv
