// The partial-order reduction's walk of what may run before a transition, on hand-built
// rings. Where the walk over-approximates, transitions that commute are not taken alone and
// the search grows; where it under-approximates, bugs hide. Each system is explored with and
// without the reduction: the verdicts must agree, and the reduced search must stay small.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/Protocol.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// A ring of Stages stages run for Rounds k-tiles, built step by step: a prologue that
/// initializes every barrier and publishes the inits, then roles that start after it.
struct Ring {
  unsigned Stages = 2;
  Protocol P;
  ConcreteSystem S;

  explicit Ring(unsigned Stages) : Stages(Stages) { S.P = &P; }

  /// A barrier array of Stages slots, each initialized to Count; returns its array index.
  unsigned barriers(const std::string &Name, uint32_t Count) {
    unsigned Array = P.Barriers.size();
    P.Barriers.push_back({});
    P.Barriers.back().Name = Name;
    P.Barriers.back().Slots = Stages;
    for (unsigned Slot = 0; Slot < Stages; ++Slot) {
      ConcreteStep Init;
      Init.Kind = StepKind::Init;
      Init.Barrier = S.Barriers.size();
      Init.Count = Count;
      S.Barriers.push_back({Array, Slot, 0});
      Inits.push_back(Init);
    }
    return Array;
  }
  unsigned buffers(const std::string &Name) {
    unsigned Array = P.Buffers.size();
    P.Buffers.push_back({});
    P.Buffers.back().Name = Name;
    for (unsigned Slot = 0; Slot < Stages; ++Slot)
      S.Buffers.push_back({Array, Slot, 0});
    return Array;
  }
  unsigned bar(unsigned Array, unsigned K) const { return Array * Stages + K % Stages; }
  unsigned buf(unsigned Array, unsigned K) const { return Array * Stages + K % Stages; }
  /// The parity of k-tile K's phase of its stage (a consumer's; a producer's is flipped).
  uint32_t parity(unsigned K) const { return (K / Stages) & 1; }

  static ConcreteStep wait(unsigned Barrier, uint32_t Parity) {
    ConcreteStep C;
    C.Kind = StepKind::Wait;
    C.Barrier = Barrier;
    C.Parity = Parity;
    return C;
  }
  static ConcreteStep arrive(unsigned Barrier, uint32_t TxBytes = 0) {
    ConcreteStep C;
    C.Kind = StepKind::Arrive;
    C.Barrier = Barrier;
    C.Count = 1;
    C.TxBytes = TxBytes;
    return C;
  }
  static ConcreteStep load(unsigned Buffer, unsigned Barrier, uint32_t Bytes) {
    ConcreteStep C;
    C.Kind = StepKind::AsyncLoad;
    C.Writes.push_back(Buffer);
    C.Targets.push_back(Barrier);
    C.TxBytes = Bytes;
    C.Count = 1;
    return C;
  }
  static ConcreteStep read(unsigned Buffer) {
    ConcreteStep C;
    C.Kind = StepKind::Read;
    C.Reads.push_back(Buffer);
    return C;
  }
  /// A producer's fill of k-tile K: arrive.expect_tx on the stage's full barrier, then
  /// the copy into its buffer.
  void fill(std::vector<ConcreteStep> &Steps, unsigned Full, unsigned A, unsigned K) const {
    Steps.push_back(arrive(bar(Full, K), 64));
    Steps.push_back(load(buf(A, K), bar(Full, K), 64));
  }
  /// A consumer's k-tile K: the wait for the fill (at Parity), the read, the release.
  void consume(std::vector<ConcreteStep> &Steps, unsigned Full, unsigned A, unsigned Empty,
               unsigned K, uint32_t Parity) const {
    Steps.push_back(wait(bar(Full, K), Parity));
    Steps.push_back(read(buf(A, K)));
    Steps.push_back(arrive(bar(Empty, K)));
  }

  void role(const std::string &Name, std::vector<ConcreteStep> Steps) {
    ConcreteAgent A;
    A.Name = Name;
    A.Program = S.Agents.size();
    A.Steps = std::move(Steps);
    Roles.push_back(std::move(A));
  }
  /// The system: the prologue first, then the roles.
  const ConcreteSystem &system() {
    ConcreteAgent Prologue;
    Prologue.Name = "prologue";
    Prologue.Place = Placement::Prologue;
    Prologue.Steps = Inits;
    ConcreteStep Fence;
    Fence.Kind = StepKind::InitFence;
    Prologue.Steps.push_back(Fence);
    S.Agents = {Prologue};
    for (ConcreteAgent &A : Roles)
      S.Agents.push_back(A);
    return S;
  }

private:
  std::vector<ConcreteStep> Inits;
  std::vector<ConcreteAgent> Roles;
};

/// Explores S with and without the reduction; the verdicts must agree. Returns the reduced
/// search.
ExploreResult exploreBoth(const ConcreteSystem &S) {
  ExploreOptions O;
  O.MaxStates = 2000000;
  ExploreResult Reduced = explore(S, O);
  O.PartialOrder = false;
  ExploreResult Full = explore(S, O);
  EXPECT_EQ(Reduced.Verdict, Full.Verdict)
      << "reduced: " << Reduced.Message << "; full: " << Full.Message;
  EXPECT_LE(Reduced.States, Full.States);
  return Reduced;
}

/// A correct system: clean with the reduction and without, in fewer than Most states with
/// it.
void expectCleanWithin(const ConcreteSystem &S, uint64_t Most) {
  ExploreResult E = exploreBoth(S);
  EXPECT_EQ(E.Verdict, ExploreVerdict::Clean) << E.Message;
  EXPECT_LT(E.States, Most);
}

/// One producer fills two consumers' stages (a copy and an arrive.expect_tx on each one's own
/// full barrier); both release a stage on one empty barrier of count 2. EmptyCount and
/// SecondParity (the second consumer's parity of its first k-tile) seed bugs.
const ConcreteSystem &twoConsumers(Ring &R, unsigned KTiles, uint32_t EmptyCount = 2,
                                   uint32_t SecondFirstParity = 0) {
  unsigned Full0 = R.barriers("full0", 1), Full1 = R.barriers("full1", 1);
  unsigned Empty = R.barriers("empty", EmptyCount);
  unsigned A0 = R.buffers("A0"), A1 = R.buffers("A1");
  std::vector<ConcreteStep> Producer, C0, C1;
  for (unsigned K = 0; K < KTiles; ++K) {
    Producer.push_back(Ring::wait(R.bar(Empty, K), R.parity(K) ^ 1));
    R.fill(Producer, Full0, A0, K);
    R.fill(Producer, Full1, A1, K);
    R.consume(C0, Full0, A0, Empty, K, R.parity(K));
    R.consume(C1, Full1, A1, Empty, K, R.parity(K) ^ (K < R.Stages ? SecondFirstParity : 0));
  }
  R.role("producer", Producer);
  R.role("consumer0", C0);
  R.role("consumer1", C1);
  return R.system();
}

/// twoConsumers as a periodic system: each role's last 2 * Stages k-tiles (3 steps each) are
/// a cycle all run equally often, and consumer1 reaches a step that is a violation after
/// it, which only a schedule that leaves the cycle shows.
ConcreteSystem periodicConsumers(Ring &R, unsigned KTiles, uint32_t EmptyCount = 2) {
  ConcreteSystem S = twoConsumers(R, KTiles, EmptyCount);
  for (ConcreteAgent &A : S.Agents)
    if (A.Place == Placement::Role) {
      A.CycleBegin = 3 * (KTiles - 2 * R.Stages);
      A.CycleEnd = 3 * KTiles;
    }
  S.Agents.back().Steps.emplace_back();
  S.Agents.back().Steps.back().Kind = StepKind::ProxyFence;
  S.Agents.back().Steps.back().Undefined = "the step after the cycle was reached";
  return S;
}

TEST(ExploreReductionTest, APassCountGoesAloneWithEveryChoice) {
  // How many passes all agents run is fixed by the first to leave; a consumer at the end
  // of a pass takes it alone, both ways, even where another may end its pass first (that
  // one's choice leaves this one the same choice, which taken first reaches the same
  // states). The full search must agree: the violation after the cycle, and the deadlock of
  // a release short, are found either way.
  Ring R(2);
  ExploreResult E = exploreBoth(periodicConsumers(R, 6));
  EXPECT_EQ(E.Verdict, ExploreVerdict::Violation) << E.Message;
  Ring Short(2);
  E = exploreBoth(periodicConsumers(Short, 6, /*EmptyCount=*/3));
  EXPECT_EQ(E.Verdict, ExploreVerdict::Deadlock) << E.Message;
}

TEST(ExploreReductionTest, AWaitForTheNextPhaseDoesNotPassOnTheStaleParity) {
  // A copy's landing on consumer0's full barrier commutes with what consumer1 may do first:
  // consumer1 may use its own stages until it needs the producer again, whose next fill
  // waits for consumer0's release. A walk that let consumer1's wait for its stage's second
  // phase pass on the parity the barrier has now (as if the first were that phase) ran it
  // around the ring, and its releases then let the producer issue the next copy to the
  // landing's barrier: every landing ordered against everything. 8 k-tiles over 2 stages:
  // 215 states so, 112 now; 2488 without the reduction.
  Ring R(2);
  expectCleanWithin(twoConsumers(R, 8), 150);
}

TEST(ExploreReductionTest, TheRingsBugsAreStillFound) {
  // The same ring with a release short (empty counts 3) deadlocks, and with consumer1
  // starting at parity 1 it reads stages before their fill: the reduced search finds both.
  Ring Short(2);
  ExploreResult E = exploreBoth(twoConsumers(Short, 6, /*EmptyCount=*/3));
  EXPECT_EQ(E.Verdict, ExploreVerdict::Deadlock) << E.Message;
  Ring Early(2);
  E = exploreBoth(twoConsumers(Early, 6, 2, /*SecondFirstParity=*/1));
  EXPECT_EQ(E.Verdict, ExploreVerdict::Race) << E.Message;
}

/// One producer and one consumer; the producer peeks (try_wait as a probe) at the next
/// stage's empty barrier after each fill, and the next k-tile's wait is skipped when the
/// peek saw its phase complete (CuTeDSL's producer). PeekParity flips the peek's parity (a
/// peek at the wrong phase).
const ConcreteSystem &peekRing(Ring &R, unsigned KTiles, uint32_t PeekParity = 0) {
  unsigned Full = R.barriers("full", 1), Empty = R.barriers("empty", 1);
  unsigned A = R.buffers("A");
  std::vector<ConcreteStep> Producer, Consumer;
  for (unsigned K = 0; K < KTiles; ++K) {
    ConcreteStep Wait = Ring::wait(R.bar(Empty, K), R.parity(K) ^ 1);
    Wait.Flag = K ? 0 : -1;
    Producer.push_back(Wait);
    R.fill(Producer, Full, A, K);
    if (K + 1 < KTiles) {
      ConcreteStep Peek = Ring::wait(R.bar(Empty, K + 1), R.parity(K + 1) ^ 1 ^ PeekParity);
      Peek.Kind = StepKind::Probe;
      Peek.Flag = 0;
      Producer.push_back(Peek);
    }
    R.consume(Consumer, Full, A, Empty, K, R.parity(K));
  }
  R.role("producer", Producer);
  R.role("consumer", Consumer);
  return R.system();
}

TEST(ExploreReductionTest, APeekedWaitPassesOnlyWhereItsPeekOrItsPhaseMay) {
  // The walk let every wait a peek may skip pass, whatever the peek could see: the
  // producer ran around the ring in every walk, and no landing went alone. A peek sees
  // what the wait would, with the phases the walk needed when it peeked: 8 k-tiles over 2
  // stages, 165 states so, 81 now; 287 without the reduction (B6's proof: 507,561 states
  // so, 315,872 now).
  Ring R(2);
  expectCleanWithin(peekRing(R, 8), 120);
  // A peek at the phase before the one the wait needs skips a wait that should block: the
  // producer refills a stage the consumer has not read, and its second arrive.expect_tx
  // on the stage's full barrier is one more than the phase has pending. Found with the
  // reduction too.
  Ring Wrong(2);
  ExploreResult E = exploreBoth(peekRing(Wrong, 6, /*PeekParity=*/1));
  EXPECT_EQ(E.Verdict, ExploreVerdict::Violation) << E.Message;
}

/// One producer and two tcgen05 MMA threads: each MMA reads its half of every stage and
/// commits, the commits' arrivals releasing the stage on an empty barrier of count 2.
const ConcreteSystem &mmaRing(Ring &R, unsigned KTiles) {
  unsigned Full = R.barriers("full", 1), Empty = R.barriers("empty", 2);
  unsigned A0 = R.buffers("A0"), A1 = R.buffers("A1");
  std::vector<ConcreteStep> Producer, Mma[2];
  for (unsigned K = 0; K < KTiles; ++K) {
    Producer.push_back(Ring::wait(R.bar(Empty, K), R.parity(K) ^ 1));
    Producer.push_back(Ring::arrive(R.bar(Full, K), 128));
    Producer.push_back(Ring::load(R.buf(A0, K), R.bar(Full, K), 64));
    Producer.push_back(Ring::load(R.buf(A1, K), R.bar(Full, K), 64));
    for (unsigned M = 0; M < 2; ++M) {
      Mma[M].push_back(Ring::wait(R.bar(Full, K), R.parity(K)));
      ConcreteStep Issue;
      Issue.Kind = StepKind::MmaIssue;
      Issue.Queue = AsyncQueue::Tcgen05;
      Issue.Reads.push_back(R.buf(M ? A1 : A0, K));
      Mma[M].push_back(Issue);
      ConcreteStep Commit;
      Commit.Kind = StepKind::MmaCommit;
      Commit.Queue = AsyncQueue::Tcgen05;
      Commit.Targets.push_back(R.bar(Empty, K));
      Commit.Count = 1;
      Mma[M].push_back(Commit);
    }
  }
  // The producer's tail: the CTA stays until the last commits arrived.
  for (unsigned K = KTiles; K < KTiles + R.Stages; ++K)
    Producer.push_back(Ring::wait(R.bar(Empty, K), R.parity(K) ^ 1));
  R.role("producer", Producer);
  R.role("mma0", Mma[0]);
  R.role("mma1", Mma[1]);
  return R.system();
}

/// An MMA thread accumulates each tile in TMEM (two k-steps, one commit to acc_full) and an
/// epilogue reads it (tcgen05.ld, tcgen05.wait::ld), zeroes it for the tile after next
/// (tcgen05.st, tcgen05.wait::st, as Triton does) and releases it on acc_empty; tiles
/// alternate between two accumulators of 128 columns. The bugs: the epilogue not waiting on
/// acc_full, releasing before its wait::ld or before its wait::st, or both accumulators at
/// the same columns.
enum class AccBug { None, NoFullWait, ReleaseBeforeWaitLd, ReleaseBeforeWaitSt, SharedColumns };
const ConcreteSystem &accumulatorRing(Ring &R, unsigned Tiles, AccBug Bug) {
  unsigned Full = R.barriers("acc_full", 1), Empty = R.barriers("acc_empty", 1);
  std::vector<ConcreteStep> Mma, Epilogue;
  for (unsigned T = 0; T < Tiles; ++T) {
    uint32_t First = Bug == AccBug::SharedColumns ? 0 : (T % 2) * 128;
    Mma.push_back(Ring::wait(R.bar(Empty, T), R.parity(T) ^ 1));
    for (unsigned K = 0; K < 2; ++K) {
      ConcreteStep Issue;
      Issue.Kind = StepKind::MmaIssue;
      Issue.Queue = AsyncQueue::Tcgen05;
      Issue.TmemFirst = First;
      Issue.TmemEnd = First + 128;
      Mma.push_back(Issue);
    }
    ConcreteStep Commit;
    Commit.Kind = StepKind::MmaCommit;
    Commit.Queue = AsyncQueue::Tcgen05;
    Commit.Targets.push_back(R.bar(Full, T));
    Commit.Count = 1;
    Mma.push_back(Commit);
    if (Bug != AccBug::NoFullWait)
      Epilogue.push_back(Ring::wait(R.bar(Full, T), R.parity(T)));
    ConcreteStep Load;
    Load.Kind = StepKind::TmemRead;
    Load.TmemFirst = First;
    Load.TmemEnd = First + 128;
    Epilogue.push_back(Load);
    ConcreteStep WaitLd, Zero = Load, WaitSt;
    WaitLd.Kind = StepKind::TmemWait;
    Zero.Kind = StepKind::TmemWrite;
    WaitSt.Kind = StepKind::TmemWriteWait;
    // The correct ring and the one that releases before wait::st zero the accumulator; the
    // release goes after the last wait, or before the one the bug names.
    std::vector<ConcreteStep> Tail = {WaitLd};
    if (Bug == AccBug::None || Bug == AccBug::ReleaseBeforeWaitSt)
      Tail.insert(Tail.end(), {Zero, WaitSt});
    size_t Release = Bug == AccBug::ReleaseBeforeWaitLd   ? 0
                     : Bug == AccBug::ReleaseBeforeWaitSt ? 2
                                                          : Tail.size();
    Tail.insert(Tail.begin() + Release, Ring::arrive(R.bar(Empty, T)));
    Epilogue.insert(Epilogue.end(), Tail.begin(), Tail.end());
  }
  // The MMA thread stays until the last accumulators were released.
  for (unsigned T = Tiles; T < Tiles + R.Stages; ++T)
    Mma.push_back(Ring::wait(R.bar(Empty, T), R.parity(T) ^ 1));
  R.role("mma", Mma);
  R.role("epilogue", Epilogue);
  R.system();
  // The prologue allocates the columns.
  ConcreteStep Alloc;
  Alloc.Kind = StepKind::Alloc;
  Alloc.Columns = 256;
  R.S.Agents.front().Steps.insert(R.S.Agents.front().Steps.begin(), Alloc);
  return R.S;
}

TEST(ExploreReductionTest, TensorMemoryRacesAreFoundAndTheirReductionHolds) {
  // MMAs touch their columns as updates that commute with each other, and a tcgen05.ld's
  // or tcgen05.st's columns until its wait::ld or wait::st: the reduced search agrees with the full one on
  // every variant, and the clean ring stays small (5 tiles: 116 states reduced, 207 full).
  {
    Ring R(2);
    expectCleanWithin(accumulatorRing(R, 5, AccBug::None), 130);
  }
  struct Case {
    AccBug Bug;
    const char *Says;
  } Cases[] = {
      {AccBug::NoFullWait, "tcgen05.ld of epilogue reads TMEM columns 0 to 127 while the "
                           "tcgen05.mma of mma that writes columns 0 to 127 may still run"},
      {AccBug::ReleaseBeforeWaitLd, "the tcgen05.mma of mma writes TMEM columns 0 to 127 "
                                    "while the tcgen05.ld of epilogue that reads columns 0 "
                                    "to 127 may still run"},
      {AccBug::ReleaseBeforeWaitSt, "the tcgen05.mma of mma writes TMEM columns 0 to 127 "
                                    "while the tcgen05.st of epilogue that writes columns 0 "
                                    "to 127 may still run"},
      {AccBug::SharedColumns, "columns 0 to 127"},
  };
  for (const Case &C : Cases) {
    Ring R(2);
    ExploreResult E = exploreBoth(accumulatorRing(R, 5, C.Bug));
    EXPECT_EQ(E.Verdict, ExploreVerdict::Race) << int(C.Bug) << ": " << E.Message;
    EXPECT_NE(E.Message.find(C.Says), std::string::npos) << int(C.Bug) << ": " << E.Message;
    EXPECT_EQ(E.Check, "accumulator-early-read") << E.Message;
  }
}

TEST(ExploreReductionTest, PastARaceTheColumnsInUseAreNotKept) {
  // Past a race (StopAtRace off) only synchronization counts: which TMEM columns a
  // tcgen05.ld or tcgen05.st still uses, and what the buffers hold, are neither kept nor
  // in the footprints. The rings that release early then take no more states than the
  // clean one (kept, B5's variant that frees its accumulator before wait::ld ran out of a
  // million states); the one without its acc_full wait still deadlocks (its epilogue
  // completes two acc_empty phases before the MMA thread sees the first), reduced or not.
  uint64_t Clean = 0;
  for (AccBug Bug : {AccBug::None, AccBug::ReleaseBeforeWaitLd, AccBug::ReleaseBeforeWaitSt,
                     AccBug::NoFullWait}) {
    Ring R(2);
    ConcreteSystem S = accumulatorRing(R, 5, Bug);
    ExploreOptions O;
    O.StopAtRace = false;
    ExploreResult Reduced = explore(S, O);
    O.PartialOrder = false;
    ExploreResult Full = explore(S, O);
    ExploreVerdict Expected =
        Bug == AccBug::NoFullWait ? ExploreVerdict::Deadlock : ExploreVerdict::Clean;
    EXPECT_EQ(Reduced.Verdict, Expected) << int(Bug) << ": " << Reduced.Message;
    EXPECT_EQ(Full.Verdict, Expected) << int(Bug) << ": " << Full.Message;
    if (Bug == AccBug::None) {
      Clean = Reduced.States;
    } else if (Expected == ExploreVerdict::Clean) {
      EXPECT_LE(Reduced.States, Clean) << int(Bug);
    }
  }
}

TEST(ExploreReductionTest, AnArrivalPastThePhaseIsAPhaseSkipOnlyFromTheSameThreads) {
  // A full barrier of count 1 whose phase waits for its copy's bytes: a second arrival
  // before the copy lands has no pending count left (a barrier misuse). From the producer
  // that arrived already, it ran a phase ahead (B1's prefill of one stage too many):
  // mbarrier-phase-skip. From another role, the count has no room for it:
  // mbarrier-arrival-count. The names are what `wsv explain` diagnoses the trace by.
  for (bool SameAgent : {true, false}) {
    Ring R(1);
    unsigned Full = R.barriers("full", 1);
    unsigned A = R.buffers("A");
    std::vector<ConcreteStep> Producer;
    R.fill(Producer, Full, A, 0);
    if (SameAgent)
      Producer.push_back(Ring::arrive(R.bar(Full, 0), 64));
    R.role("producer", Producer);
    R.role("other", SameAgent ? std::vector<ConcreteStep>{}
                              : std::vector<ConcreteStep>{Ring::arrive(R.bar(Full, 0))});
    ExploreResult E = explore(R.system(), ExploreOptions());
    ASSERT_EQ(E.Verdict, ExploreVerdict::Violation) << SameAgent << ": " << E.Message;
    EXPECT_NE(E.Message.find("more arrivals than the current phase has pending"),
              std::string::npos)
        << E.Message;
    EXPECT_EQ(E.Check, SameAgent ? "mbarrier-phase-skip" : "mbarrier-arrival-count");
  }
}

TEST(ExploreReductionTest, APendingCommitArrivesOnce) {
  // A tcgen05.commit whose MMAs are in flight arrives once on its barrier when they
  // complete. Counted as arrivals without end, it let the producer's walk pass the empty
  // waits of later phases, up to its next copy into a stage an MMA thread is about to
  // wait for, whose wait then never went alone. 9 k-tiles over 3 stages: 169 states so,
  // 140 now; 15,959 without the reduction (B5's proof: 2.74 million states so, 437,292 now).
  Ring R(3);
  expectCleanWithin(mmaRing(R, 9), 155);
}

/// Two roles of a merged system (ConcreteAgent::Exits): three fences, with an exit after
/// the first and a fence after it. The first role's second step is a wait on a barrier
/// nothing arrives on: it deadlocks when the other role goes on past the exit first.
ConcreteSystem exitRace(Ring &R) {
  unsigned Never = R.barriers("never", 1);
  ConcreteStep Fence;
  Fence.Kind = StepKind::ProxyFence;
  R.role("first", {Fence, Ring::wait(R.bar(Never, 0), 0), Fence, Fence});
  R.role("second", {Fence, Fence, Fence, Fence});
  ConcreteSystem S = R.system();
  for (ConcreteAgent &A : S.Agents)
    if (A.Place == Placement::Role) {
      A.MainEnd = 3;
      A.Exits.push_back({/*At=*/1, /*Begin=*/3, /*End=*/4});
    }
  return S;
}

TEST(ExploreReductionTest, LeavingAloneWaitsUntilNoneMayGoOnPastTheExitFirst) {
  // Where the tile loop is left is fixed by the first role that leaves or goes on. The
  // first role at its exit, its next step a wait nothing completes, may only leave; taken
  // alone there, it fixes the exit for both, and the schedule where the second role goes
  // on first (the first role then waits for ever) is lost. The second role may go on past
  // the exit first, so the first role's leaving is not taken alone.
  Ring R(1);
  ConcreteSystem S = exitRace(R);
  ExploreResult E = exploreBoth(S);
  EXPECT_EQ(E.Verdict, ExploreVerdict::Deadlock) << E.Message;
  // Without the wait, every schedule finishes; leaving and going on then go alone, together.
  S.Agents[1].Steps[1] = S.Agents[1].Steps[0];
  E = exploreBoth(S);
  EXPECT_EQ(E.Verdict, ExploreVerdict::Clean) << E.Message;
}

/// A waiter that deadlocks when the arriver completes two phases before it looks (parity 0
/// has come round again), and otherwise passes and reads a buffer that a copy has not filled
/// yet: a race only the schedules that do not deadlock reach, deeper than the deadlock.
const ConcreteSystem &raceBehindADeadlock(Ring &R) {
  unsigned F = R.barriers("F", 1), G = R.barriers("G", 1), A = R.buffers("A");
  ConcreteStep Fence;
  Fence.Kind = StepKind::ProxyFence;
  R.role("arriver", {Ring::arrive(R.bar(F, 0)), Ring::arrive(R.bar(F, 0))});
  R.role("waiter", {Ring::wait(R.bar(F, 0), 0), Fence, Fence, Ring::read(R.buf(A, 0))});
  R.role("copier", {Ring::load(R.buf(A, 0), R.bar(G, 0), 64)});
  return R.system();
}

/// Explores S past its first bug (O says which) with the reduction and without: both find
/// Want, and the reduced search's schedule replays to it (with races let go on where O
/// lets them). Returns the reduced search.
ExploreResult expectPast(const ConcreteSystem &S, ExploreOptions O, ExploreVerdict Want) {
  ExploreResult Reduced = explore(S, O);
  O.PartialOrder = false;
  ExploreResult Full = explore(S, O);
  EXPECT_EQ(Reduced.Verdict, Want) << Reduced.Message;
  EXPECT_EQ(Full.Verdict, Want) << Full.Message;
  ExploreResult Again = replay(S, Reduced.Schedule, O.StopAtRace);
  EXPECT_EQ(Again.Verdict, Want);
  EXPECT_EQ(Again.Message, Reduced.Message);
  return Reduced;
}

TEST(ExploreReductionTest, PastADeadlockTheSearchFindsTheRaceBehindIt) {
  Ring R(1);
  const ConcreteSystem &S = raceBehindADeadlock(R);
  // The search stops at the deadlock, the shallower bug.
  ExploreResult First = exploreBoth(S);
  ASSERT_EQ(First.Verdict, ExploreVerdict::Deadlock) << First.Message;
  // Past it, the race; the reduced and the full search agree, and the schedule replays.
  ExploreOptions O;
  O.StopAtDeadlock = false;
  ExploreResult Reduced = expectPast(S, O, ExploreVerdict::Race);
  EXPECT_EQ(Reduced.Message.rfind("A is read", 0), 0u) << Reduced.Message;
  // Without the copy there is nothing behind the deadlock: clean past it, never a deadlock.
  Ring Quiet(1);
  unsigned F = Quiet.barriers("F", 1);
  Quiet.role("arriver", {Ring::arrive(Quiet.bar(F, 0)), Ring::arrive(Quiet.bar(F, 0))});
  Quiet.role("waiter", {Ring::wait(Quiet.bar(F, 0), 0)});
  EXPECT_EQ(explore(Quiet.system(), O).Verdict, ExploreVerdict::Clean);
  EXPECT_EQ(exploreBoth(Quiet.system()).Verdict, ExploreVerdict::Deadlock);
}

/// A reader that takes a buffer before the copy into it lands (a race), then arrives once on
/// a barrier that the waiter, with SecondWait, waits on twice: its second wait never
/// completes. The deadlock is behind the race, in every schedule.
const ConcreteSystem &deadlockBehindARace(Ring &R, bool SecondWait) {
  unsigned F = R.barriers("F", 1), G = R.barriers("G", 1), A = R.buffers("A");
  R.role("reader", {Ring::read(R.buf(A, 0)), Ring::arrive(R.bar(F, 0))});
  // The waiter also waits for the copy, so that no CTA exits before it lands.
  std::vector<ConcreteStep> Waiter = {Ring::wait(R.bar(G, 0), 0), Ring::wait(R.bar(F, 0), 0)};
  if (SecondWait)
    Waiter.push_back(Ring::wait(R.bar(F, 0), 1));
  R.role("waiter", Waiter);
  R.role("copier", {Ring::arrive(R.bar(G, 0), 64), Ring::load(R.buf(A, 0), R.bar(G, 0), 64)});
  return R.system();
}

TEST(ExploreReductionTest, PastARaceTheSearchFindsTheDeadlockBehindIt) {
  Ring R(1);
  const ConcreteSystem &S = deadlockBehindARace(R, /*SecondWait=*/true);
  // The search stops at the race, the shallower bug (with the reduction and without; the
  // reduced search may take a state more to get there, so not exploreBoth).
  ExploreOptions Stop;
  ASSERT_EQ(explore(S, Stop).Verdict, ExploreVerdict::Race);
  Stop.PartialOrder = false;
  ASSERT_EQ(explore(S, Stop).Verdict, ExploreVerdict::Race);
  // Past it, the deadlock; the reduced and the full search agree, and the schedule replays
  // when races are let go on (and not when they stop it).
  ExploreOptions O;
  O.StopAtRace = false;
  ExploreResult Reduced = expectPast(S, O, ExploreVerdict::Deadlock);
  EXPECT_NE(Reduced.Message.find("waiter"), std::string::npos) << Reduced.Message;
  EXPECT_NE(replay(S, Reduced.Schedule).Verdict, ExploreVerdict::Deadlock)
      << "a replay that stops at races does not get past the read";
  // Without the second wait nothing is behind the race: clean past it, never before.
  Ring Fixed(1);
  const ConcreteSystem &T = deadlockBehindARace(Fixed, /*SecondWait=*/false);
  ExploreResult Past = explore(T, O);
  EXPECT_EQ(Past.Verdict, ExploreVerdict::Clean) << Past.Message;
  EXPECT_EQ(explore(T).Verdict, ExploreVerdict::Race);
}

} // namespace
