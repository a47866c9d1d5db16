//===- StageOrder.h - program order and stage slots for the race checks -----------===//
//
// The race checks ask questions of one shape: "before this read of A[s], did the same threads
// wait on the barrier that the fill of A[s] completes, for the same slot?", "when this thread
// arrives on empty[s], is every read of A[s] it issued finished?". StageOrder answers the
// order half and the slot half of them:
//
//  - order: each role's events flattened into one Sequence (the prologue, the role's body,
//    the epilogue), each step knowing the loops around it, so a check walks back from a step
//    through the same iteration, the previous iteration of a loop, and earlier loops;
//  - slots: the protocol's closed forms evaluated on Samples (values of the loop iteration
//    numbers, the kernel parameters and a thread id), so `full[(k*2+1)%4]` and `A[k%4]` of an
//    unrolled copy compare as numbers; MMA descriptors that the protocol could not place in a
//    buffer are placed here by their evaluated offset from the buffer's base;
//  - buffer traffic: which barrier slot the fill of each buffer slot completes (from the async
//    loads) and which barrier slot the filling threads wait on before refilling it (the
//    release barrier: empty[s]).
//
// Sampling decides facts only for the values it tries: checks say so in their messages
// ("for k = 0, K = 64") and report what sampling cannot evaluate as a remark.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/Protocol.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {
namespace checks {

/// One event as a role runs it, with the loops around it (indices into Protocol::Loops,
/// outermost first).
struct Step {
  unsigned Event = 0;
  llvm::SmallVector<unsigned, 3> Loops;
  bool InEpilogue = false;
  bool InPrologue = false;
};

/// What one role's threads run, in program order.
struct Sequence {
  const Role *R = nullptr;
  std::vector<Step> Steps;
};

/// Values for the leaves of closed forms: every kernel parameter takes Param (the checks'
/// facts are about tile counts, and one value per sample keeps M, N and K consistent).
struct Sample {
  uint64_t Param = 0;
  unsigned Thread = 0;
  std::map<unsigned, uint64_t> Iteration; ///< LoopId -> iteration number
};

/// A slot of a buffer or a barrier array.
struct SlotRef {
  unsigned Array = NoIndex; ///< Protocol::Buffers or Protocol::Barriers
  uint64_t Slot = 0;
  bool operator<(const SlotRef &O) const {
    return Array != O.Array ? Array < O.Array : Slot < O.Slot;
  }
  bool operator==(const SlotRef &O) const { return Array == O.Array && Slot == O.Slot; }
  bool operator!=(const SlotRef &O) const { return !(*this == O); }
};

/// How an earlier step relates to a later one in the walk back.
struct Earlier {
  unsigned Index = 0;    ///< into Sequence::Steps
  unsigned Previous = NoIndex; ///< the loop (Protocol::Loops) whose earlier iteration it is in
  unsigned Distance = 1; ///< how many iterations of Previous earlier
};

class StageOrder {
public:
  explicit StageOrder(const Protocol &P);

  const Protocol &protocol() const { return P; }
  llvm::ArrayRef<Sequence> sequences() const { return Seqs; }
  const Event &event(const Sequence &S, unsigned I) const { return P.Events[S.Steps[I].Event]; }

  /// E's value in S; std::nullopt when a leaf has no value (an opaque phi, a load).
  std::optional<uint64_t> eval(const Expr *E, const Sample &S) const;
  /// Whether a condition holds in S (an absent one does); std::nullopt when unknown.
  std::optional<bool> holds(const ProtocolValue &When, const Sample &S) const;
  /// The samples in which step I runs: parameters from a fixed list, the step's loops over
  /// their first iterations and their last, a thread that runs the event.
  std::vector<Sample> samplesAt(const Sequence &Seq, unsigned I) const;
  /// Whether step I runs in S: its loops' iteration numbers are below their trip counts and
  /// its loops' and its own conditions hold. std::nullopt when that cannot be evaluated.
  std::optional<bool> runs(const Sequence &Seq, unsigned I, const Sample &S) const;
  /// Whether S puts a loop around step I whose trip count cannot be evaluated past its first
  /// iteration: such a sample stands for iterations that may not exist.
  bool guessesIterations(const Sequence &Seq, unsigned I, const Sample &S) const;
  /// The steps that run before step I, nearest first: the same iteration back to the
  /// start of the sequence, then for each loop around I (innermost first) the steps after I in
  /// its body, which ran in its previous iteration.
  std::vector<Earlier> before(const Sequence &Seq, unsigned I) const;
  /// The sample in which an earlier step ran, seen from step I in S: loops around both keep
  /// their iteration (the loop of E.Previous one less), loops around only the earlier step
  /// are at their last iteration. std::nullopt when that step did not run (iteration 0 has
  /// no previous one; a loop that runs no iteration).
  std::optional<Sample> at(const Sequence &Seq, const Earlier &E, unsigned I,
                           const Sample &S) const;

  /// The steps that run between an earlier step and step I, in execution order.
  std::vector<unsigned> between(const Sequence &Seq, const Earlier &E, unsigned I) const;
  /// The same for step J of loop Loop's body, Distance iterations of it before step I.
  std::vector<unsigned> between(const Sequence &Seq, unsigned J, unsigned Loop,
                                unsigned Distance, unsigned I) const;
  /// The first and one past the last step of a loop's body around step I.
  std::pair<unsigned, unsigned> body(const Sequence &Seq, unsigned Loop, unsigned I) const;

  /// The buffer slot a shared-memory reference points at in S; MMA descriptors the protocol
  /// left unplaced are placed by their offset from each buffer's base.
  std::optional<SlotRef> place(const BufferRef &R, const Sample &S) const;
  /// The barrier slot a barrier reference names in S, in whichever CTA of the cluster.
  std::optional<SlotRef> slot(const BarrierRef &R, const Sample &S) const;

  /// The barrier slots the async loads into a buffer slot complete (empty: not a stage
  /// filled by async copies, or never seen filled).
  const std::set<SlotRef> &fillsOf(SlotRef BufferSlot) const;
  /// The barrier slots the filling threads wait on before loading into the buffer slot.
  const std::set<SlotRef> &releasesOf(SlotRef BufferSlot) const;
  /// The buffer slots whose refill waits on this barrier slot.
  std::vector<SlotRef> releasedBy(SlotRef BarrierSlot) const;
  /// Whether some async load fills this buffer.
  bool isFilled(unsigned Buffer) const;
  /// Whether barrier Array is waited on by the filler before a load (an "empty" barrier).
  bool isRelease(unsigned Array) const { return ReleaseArrays.count(Array) != 0; }

  /// The stage buffers an event reads: Mma operands and ld.shared sources.
  llvm::SmallVector<const BufferRef *, 2> reads(const Event &E) const;
  /// `A[k%4]`, `full[k%4]` with the slot's closed form when it has one.
  std::string name(const BufferRef &R) const;
  std::string name(const BarrierRef &R) const;
  /// `k = 1, K = 64`: the sample's loop variables and the parameters that decide whether
  /// and how often step I runs.
  std::string describe(const Sample &S, const Sequence &Seq, unsigned I) const;
  /// The role's name, or `epilogue` for a step after the roles join.
  std::string who(const Sequence &Seq, unsigned I) const;

private:
  void flatten(const std::vector<ProtocolItem> &Items, llvm::SmallVector<unsigned, 3> &Loops,
               Sequence &Out, bool Prologue, bool Epilogue);
  void learnBuffers();
  std::optional<uint64_t> leaf(const Expr *E, const Sample &S) const;
  std::optional<bool> decide(const Expr *E, const Sample &S) const;
  std::optional<SlotRef> placeAt(unsigned Buffer, uint64_t Offset, const Expr *Address,
                                 bool Resolved, const Sample &S) const;

  const Protocol &P;
  std::vector<Sequence> Seqs;
  std::map<SlotRef, std::set<SlotRef>> Fills;    ///< buffer slot -> full barrier slots
  std::map<SlotRef, std::set<SlotRef>> Releases; ///< buffer slot -> empty barrier slots
  std::set<unsigned> FilledBuffers;
  std::set<unsigned> ReleaseArrays;
  std::set<SlotRef> None;
};

// The race checks, declared for their definitions in lib/checks/<Function>.cpp.
#define WSV_CHECK(Function, Name, Category, Summary) void Function(CheckContext &Ctx);
#include "RaceChecks.def"
#undef WSV_CHECK

/// Whether Inner's threads all belong to Outer (both known exactly).
bool coveredBy(const ThreadSet &Inner, const ThreadSet &Outer);
/// Whether two thread sets share a thread (unknown sets are taken to).
bool overlaps(const ThreadSet &A, const ThreadSet &B);
/// Whether the event is a CTA-wide or named barrier that all of Threads take part in.
bool synchronizes(const Event &E, const ThreadSet &Threads);
/// A note at an event.
void addNote(Finding &F, std::string Message, const Event &At);

/// Whether the event is the decoded synchronization instruction K.
inline bool isSync(const Event &E, models::SyncKind K) { return E.Sync && *E.Sync == K; }

/// The group of an async operation (a wgmma, a TMA store) followed through the events after
/// it, in execution order: `wait_group N` leaves the N newest groups pending, so it retires
/// the operation's group once N newer ones were committed before it.
class GroupRetirement {
public:
  GroupRetirement(models::SyncKind Commit, models::SyncKind Wait) : Commit(Commit), Wait(Wait) {}
  /// Takes the next event; true when it is a wait that retires the group.
  bool retiredBy(const Event &E) {
    if (isSync(E, Commit) && Commits++ == 0)
      First = &E;
    if (!isSync(E, Wait) || Commits == 0)
      return false;
    std::optional<uint64_t> N = E.WaitN.constant();
    return N && Commits - 1 >= *N;
  }
  /// The commit that closed the group (nullptr: none yet).
  const Event *firstCommit() const { return First; }

private:
  models::SyncKind Commit, Wait;
  unsigned Commits = 0;
  const Event *First = nullptr;
};

} // namespace checks
} // namespace analyzer
} // namespace wsv
