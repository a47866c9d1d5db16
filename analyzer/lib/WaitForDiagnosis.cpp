//===- WaitForDiagnosis.cpp - the bug class a stuck kernel points to, and its fix ----===//
//
// Each rule asks for facts of the snapshot (who is stuck where, at which iteration, who is
// silent) and of the protocol (init counts, arrivals and bytes per k-tile, trip counts, named
// barrier ids and thread counts, setmaxnreg thread sets) that together are the shape of one
// bug class. Rules run from the most specific to the most general; the first whose facts all
// hold names the class, and its facts are the evidence printed with it. When none holds, the
// diagnosis says so instead of picking the nearest.
//
//===----------------------------------------------------------------------------------===//
#include "WaitForInternal.h"

#include "wsv/analyzer/ProtocolPrinter.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace wsv {
namespace analyzer {

const char *checkName(BugClass C) {
  switch (C) {
  case BugClass::InitialPhase: return "mbarrier-initial-phase";
  case BugClass::ArrivalCount: return "mbarrier-arrival-count";
  case BugClass::TxBytes: return "mbarrier-tx-bytes";
  case BugClass::NoArriver: return "mbarrier-no-arriver";
  case BugClass::TripCount: return "mbarrier-trip-count";
  case BugClass::PhaseSkip: return "mbarrier-phase-skip";
  case BugClass::BarrierDivergent: return "barrier-divergent";
  case BugClass::NamedBarrierCount: return "named-barrier-count";
  case BugClass::NamedBarrierIdCollision: return "named-barrier-id-collision";
  case BugClass::SetmaxnregNonuniform: return "setmaxnreg-nonuniform";
  case BugClass::SmemRawWait: return "smem-raw-wait";
  case BugClass::SmemWarRelease: return "smem-war-release";
  case BugClass::BulkStoreReuse: return "bulk-store-reuse";
  case BugClass::ProxyFenceMissing: return "proxy-fence-missing";
  case BugClass::AccumulatorEarlyRead: return "accumulator-early-read";
  case BugClass::TmemDeallocEarly: return "tmem-dealloc-early";
  case BugClass::MbarrierInitVisibility: return "mbarrier-init-visibility";
  case BugClass::ClusterExitEarly: return "cluster-exit-early";
  case BugClass::MbarrierReuse: return "mbarrier-reuse";
  case BugClass::Tcgen05AllocExhaustion: return "tcgen05-alloc-exhaustion";
  case BugClass::Tcgen05AllocLaneGuard: return "tcgen05-alloc-lane-guard";
  case BugClass::AlignedDivergent: return "aligned-divergent";
  case BugClass::ClusterMulticastMask: return "cluster-multicast-mask";
  case BugClass::Tcgen05CommitMultiThread: return "tcgen05-commit-multi-thread";
  case BugClass::Unclassified: return "";
  }
  return "";
}

const char *fixAdvice(BugClass C) {
  switch (C) {
  case BugClass::InitialPhase:
    return "the producer starts waiting on empty with parity 1 (the barrier starts in phase 0, "
           "so a wait for parity 1 passes at once: every stage is free on the first round); "
           "the consumer starts waiting on full with parity 0";
  case BugClass::ArrivalCount:
    return "make the init count equal the arrivals of one phase: one per arriving thread "
           "(one per consumer warpgroup when only its leader arrives, times the cluster size "
           "for remote arrivals), or let every counted thread arrive";
  case BugClass::TxBytes:
    return "expect exactly the bytes the copies completing on the barrier deliver per phase "
           "(the sum of the boxes of every TMA load, times the CTAs a multicast reaches)";
  case BugClass::NoArriver:
    return "give the barrier an arrival for every phase someone waits on: release the stage "
           "(arrive on empty) after its reads are done, and keep the roles that arrive alive "
           "until the last phase (a producer tail in clusters)";
  case BugClass::TripCount:
    return "run the producer and the consumer loops for the same number of k-tiles (one trip "
           "count, computed once, for both roles), and every thread of a role for the same "
           "number of tiles (advance the scheduler in every thread, not in one)";
  case BugClass::PhaseSkip:
    return "carry the ring's stage and phase across tiles in every role (one counter that "
           "never restarts), and fill a stage again only after the wait for its last use, so "
           "no role gets a phase ahead of, or falls two behind, a barrier it uses";
  case BugClass::BarrierDivergent:
    return "do not put a CTA-wide barrier (bar.sync 0, __syncthreads) inside one role's "
           "branch; sync that role with a named barrier counting only its own threads";
  case BugClass::NamedBarrierCount:
    return "give bar.sync the number of threads that really reach that id (a multiple of 32)";
  case BugClass::NamedBarrierIdCollision:
    return "give each group of warps that syncs on its own a named barrier id of its own";
  case BugClass::SetmaxnregNonuniform:
    return "execute setmaxnreg in every warp of the warpgroup, with the same count, so the "
           "registers the producer frees reach the consumers' setmaxnreg.inc";
  case BugClass::SmemRawWait:
    return "before reading a stage, wait on its full barrier with the parity of the round "
           "(the phase its copies complete), in every thread that reads it; cp.async data "
           "needs the copying thread's cp.async.wait_group first. Where the reader did wait, "
           "the phase completed before the copy landed: expect_tx fewer bytes than the "
           "copies bring, or more arrivals than the init count (mbarrier-tx-bytes, "
           "mbarrier-arrival-count)";
  case BugClass::SmemWarRelease:
    return "release a stage (arrive on its empty barrier, or tcgen05.commit to it) only after "
           "every read of it is done: wgmma.wait_group for wgmma, the commit after the last "
           "tcgen05.mma that reads it, and the sibling warps' reads behind a barrier";
  case BugClass::BulkStoreReuse:
    return "before writing a TMA-store staging buffer again, cp.async.bulk.commit_group and "
           "cp.async.bulk.wait_group.read until the store that reads it is done";
  case BugClass::ProxyFenceMissing:
    return "after st.shared / stmatrix writes that a TMA store, wgmma or tcgen05.mma reads, "
           "run fence.proxy.async.shared::cta in the writing threads before the barrier that "
           "hands the buffer over";
  case BugClass::AccumulatorEarlyRead:
    return "read an accumulator only after it is complete: wgmma.wait_group for wgmma; for "
           "tcgen05, wait on the barrier the tcgen05.commit after the last MMA arrives on "
           "(mma2ld, acc_full) before tcgen05.ld, and let the next tile's MMA wait on a "
           "barrier the readers arrive on after tcgen05.wait::ld (ld2mma, acc_empty)";
  case BugClass::TmemDeallocEarly:
    return "tcgen05.dealloc only after a CTA-wide (cluster-wide for cta_group::2) barrier "
           "that follows every tcgen05.ld and MMA of the columns";
  case BugClass::MbarrierInitVisibility:
    return "after mbarrier.init, run fence.mbarrier_init.release.cluster (or fence.proxy."
           "async) and a barrier every user of the barrier passes before its first use";
  case BugClass::ClusterExitEarly:
    return "keep every CTA of the cluster alive until its peers are done with its shared "
           "memory: barrier.cluster.arrive and wait before exit, after the last remote "
           "arrival or multicast";
  case BugClass::MbarrierReuse:
    return "before using a barrier's memory for anything else (or initializing it again), "
           "let every phase anyone waits on complete and run mbarrier.inval; use a barrier "
           "only between its init and its inval";
  case BugClass::Tcgen05AllocExhaustion:
    return "allocate a power of two from 32 to 512 columns, and no more in all than the 512 "
           "a SM has for the CTAs that share it (two CTAs per SM: 256 each)";
  case BugClass::Tcgen05AllocLaneGuard:
    return "run tcgen05.alloc, dealloc and relinquish_alloc_permit in every lane of one warp "
           "(they are .sync.aligned): guard them by warp, not by elect.sync or lane 0";
  case BugClass::AlignedDivergent:
    return "reach a .sync.aligned instruction (wgmma, tcgen05.ld/st, bar.sync) with every "
           "thread of its warp (warpgroup for wgmma): guard it by warp or warpgroup index, "
           "never by a per-thread condition";
  case BugClass::ClusterMulticastMask:
    return "name only CTAs of the cluster: a multicast ctaMask below 1 << cluster size, a "
           "mapa rank below the cluster size (%cluster_nctarank)";
  case BugClass::Tcgen05CommitMultiThread:
    return "run tcgen05.commit in the one lane that issued the MMAs (the elect.sync lane): a "
           "commit from any other lane tracks nothing and arrives whenever it lands, before "
           "the MMAs are done and possibly after the CTA left";
  case BugClass::Unclassified:
    return "no known bug class fits these facts; follow the wait-for edges above";
  }
  return "";
}

BugClass bugClassOf(const std::string &Check) {
  for (unsigned C = 0; C < static_cast<unsigned>(BugClass::Unclassified); ++C)
    if (!Check.empty() && Check == checkName(static_cast<BugClass>(C)))
      return static_cast<BugClass>(C);
  return BugClass::Unclassified;
}

namespace {

std::string ptxLine(const Event &E) { return "ptx " + std::to_string(E.Where.PtxLine); }

/// The CTA rank in a solver's agent name (`writeback@cta1`: 1); nothing for a hardware
/// capture's role, which names no CTA.
std::optional<unsigned> solverCta(const std::string &Role) {
  size_t At = Role.rfind("@cta");
  unsigned Rank = 0;
  if (At == std::string::npos || llvm::StringRef(Role).substr(At + 4).getAsInteger(10, Rank))
    return std::nullopt;
  return Rank;
}

/// How many CTAs' copies of event E, of role Role, reach the barrier it names: 1 for the
/// CTA's own barrier; for one CTA's barrier of the cluster (a peer rank that is a constant),
/// every CTA of the cluster where the event and its role run in every CTA; 0 where that is
/// not known (run by rank, or aimed by a rank that varies). B4's writeback threads of both
/// CTAs arrive on the leader's ld2mma, B5's producers of both CTAs load for the leader's MMA.
unsigned ctasArriving(const Protocol &P, const Event &E, unsigned Role) {
  if (E.Barrier.PeerRank.absent())
    return 1;
  // A condition that may leave out some CTA: it reads the CTA's rank, or %ctaid.x other than
  // as the cluster's index (%ctaid.x / cluster size: a persistent kernel's "has a tile").
  const Expr *Ctaid =
      P.Analysis ? P.Analysis->context().specialRegister(SpecialRegister::CtaidX) : nullptr;
  std::function<bool(const Expr *)> PerCta = [&](const Expr *X) {
    if (X->is(ExprKind::SpecialReg))
      return X->specialRegister() == SpecialRegister::ClusterCtaRank ||
             X->specialRegister() == SpecialRegister::ClusterCtaidX ||
             X->specialRegister() == SpecialRegister::CtaidX;
    if (X->is(ExprKind::UDiv) && X->ops()[0] == Ctaid && X->ops()[1]->isConstant() &&
        X->ops()[1]->payload() == P.Launch.ClusterSize)
      return false;
    return llvm::any_of(X->ops(), PerCta);
  };
  auto ByRank = [&](const ProtocolValue &When) {
    return !When.absent() && (!When.known() || PerCta(When.E));
  };
  bool Every = E.Barrier.PeerRank.constant() && Role < P.Roles.size() && !ByRank(E.When) &&
               !ByRank(P.Roles[Role].When);
  return Every ? P.Launch.ClusterSize : 0;
}

/// Arrivals one phase of array A gets: per role, what one iteration of its loop gives
/// (threads x count of the arrivals inside it; the largest such loop, since a role's loops
/// run one after the other: a prefill, then the steady state), summed over the roles.
/// nullopt when a count or thread set is unknown.
std::optional<uint64_t> arrivalsPerPhase(const Protocol &P, unsigned A,
                                         const std::vector<std::vector<EventSite>> &Sites,
                                         std::string &Who) {
  uint64_t Sum = 0;
  std::set<unsigned> Seen;
  for (unsigned R = 0; R < Sites.size(); ++R) {
    // Keyed by loop, slot and the CTA whose barrier it is: an unrolled ring's copies in one
    // iteration are different phases, and H5's consumers arrive on each CTA's empty[s].
    using Key = std::tuple<unsigned, const Expr *, const Expr *>;
    std::map<Key, uint64_t> PerLoop;
    std::map<Key, std::string> WhoPerLoop;
    for (const EventSite &S : Sites[R]) {
      const Event &E = P.Events[S.Event];
      if (S.Loops.empty() || Seen.count(S.Event) || E.Barrier.Array != A)
        continue;
      if (E.Kind != EventKind::Arrive && E.Kind != EventKind::ArriveExpectTx &&
          E.Kind != EventKind::MmaCommit && E.Kind != EventKind::CpAsyncArrive)
        continue;
      Seen.insert(S.Event);
      std::optional<unsigned> N = E.Threads.count();
      std::optional<uint64_t> C = E.Count.absent() ? std::optional<uint64_t>(1)
                                                   : E.Count.constant();
      // A slot that depends on the thread (B5's MMA warps, each committing to its own
      // accumulator's barrier) spreads the threads over several barriers: no count per one.
      unsigned From = ctasArriving(P, E, R);
      if (!N || !C || !From || (E.Barrier.Slot.E && isThreadDependent(E.Barrier.Slot.E)))
        return std::nullopt;
      Key At{S.Loops.back(), E.Barrier.Slot.E, E.Barrier.PeerRank.E};
      PerLoop[At] += *N * *C * From;
      std::string &W = WhoPerLoop[At];
      W += (W.empty() ? "" : ", ") + P.Roles[R].Name + " " + std::to_string(*N) + " thread" +
           (*N == 1 ? "" : "s") + " x " + std::to_string(*C) + " (" + ptxLine(E) + ")" +
           (From > 1 ? " in each of the cluster's " + std::to_string(From) + " CTAs" : "");
    }
    Key Best{0, nullptr, nullptr};
    uint64_t Max = 0;
    for (auto &[L, N] : PerLoop)
      if (N > Max) {
        Max = N;
        Best = L;
      }
    if (Max) {
      Sum += Max;
      Who += (Who.empty() ? "" : "; ") + WhoPerLoop[Best];
    }
  }
  return Sum;
}

/// Bytes expected and delivered per iteration on array A, loop by loop: true when some loop
/// both expects and delivers bytes on it and the two differ (Expected, Delivered and Detail
/// describe that loop). Multicast copies and bytes bounded only by the destination are not
/// compared: their per-CTA share is not known here.
bool bytesMismatch(const Protocol &P, unsigned A, const std::vector<std::vector<EventSite>> &Sites,
                   uint64_t &Expected, uint64_t &Delivered, std::string &Detail) {
  struct Tally {
    uint64_t Expected = 0, Delivered = 0;
    bool Unknown = false;
    std::string Detail;
  };
  // By loop and slot: the expect_tx of a pair's leader (its own barrier) and the copies
  // both CTAs aim at the leader's barrier meet on one.
  std::map<std::pair<unsigned, const Expr *>, Tally> PerLoop;
  std::set<unsigned> Seen;
  for (unsigned RI = 0; RI < Sites.size(); ++RI)
    for (const EventSite &S : Sites[RI]) {
      const Event &E = P.Events[S.Event];
      if (S.Loops.empty() || Seen.count(S.Event) || E.Barrier.Array != A)
        continue;
      Seen.insert(S.Event);
      Tally &T = PerLoop[{S.Loops.back(), E.Barrier.Slot.E}];
      if (E.Kind == EventKind::ArriveExpectTx || E.Kind == EventKind::ExpectTx) {
        std::optional<unsigned> N = E.Threads.count();
        std::optional<uint64_t> B = E.TxBytes.constant();
        if (!N || !B) {
          T.Unknown = true;
          continue;
        }
        T.Expected += *N * *B;
        T.Detail += (T.Detail.empty() ? "" : "; ") + std::string("expect_tx ") +
                    std::to_string(*B) + " B (" + ptxLine(E) + ")";
      } else if (E.Kind == EventKind::AsyncLoad) {
        std::optional<uint64_t> B = E.Bytes.constant();
        std::optional<unsigned> N = E.Threads.count();
        // B5's pair: both CTAs load for the leader's MMA.
        unsigned From = ctasArriving(P, E, RI);
        if (!B || !N || !From || E.Multicast || E.BytesFrom == BytesOrigin::AllocationBound ||
            E.BytesFrom == BytesOrigin::BarrierExpect) {
          T.Unknown = true;
          continue;
        }
        T.Delivered += *N * *B * From;
        T.Detail += (T.Detail.empty() ? "" : "; ") + std::string("TMA ") + std::to_string(*B) +
                    " B (" + ptxLine(E) + ", " + toString(E.BytesFrom) + ")" +
                    (From > 1 ? " from each of the cluster's " + std::to_string(From) + " CTAs"
                              : "");
      }
    }
  for (auto &[L, T] : PerLoop)
    if (!T.Unknown && T.Expected && T.Delivered && T.Expected != T.Delivered) {
      Expected = T.Expected;
      Delivered = T.Delivered;
      Detail = T.Detail;
      return true;
    }
  return false;
}

/// How many times a site runs over the whole kernel at the captured parameters: the product
/// of its loops' trip counts, zero where its condition or a loop's is false. nullopt when a
/// trip count or condition cannot be evaluated (an inner trip that depends on an outer loop).
std::optional<uint64_t> timesRun(const Protocol &P, const EventSite &S,
                                 const std::map<std::string, uint64_t> &Params) {
  uint64_t Times = 1;
  auto Holds = [&](const ProtocolValue &When) -> std::optional<bool> {
    if (When.absent())
      return true;
    std::optional<uint64_t> V = evaluateAt(P, When.E, {}, Params);
    if (!V)
      return std::nullopt;
    return *V != 0;
  };
  for (unsigned L : S.Loops) {
    std::optional<bool> In = Holds(P.Loops[L].When);
    std::optional<uint64_t> Trip = evaluateAt(P, P.Loops[L].Trip.E, {}, Params);
    if (!In || !Trip)
      return std::nullopt;
    Times *= *In ? *Trip : 0;
  }
  std::optional<bool> Runs = Holds(P.Events[S.Event].When);
  if (!Runs)
    return std::nullopt;
  return *Runs ? Times : 0;
}

/// Phases a role's arrivals on array A complete over the run (arrivals / init count), and the
/// waits a role runs on A; nullopt when some count cannot be evaluated.
std::optional<uint64_t> totalOver(const Protocol &P, unsigned Role,
                                  const std::vector<EventSite> &Sites, unsigned A, bool Waits,
                                  const std::map<std::string, uint64_t> &Params) {
  // A role whose condition fails at these parameters runs nothing (H2's producer where
  // K / 64 == 1: its unrolled loop's count wraps around there).
  if (const ProtocolValue &When = P.Roles[Role].When; !When.absent()) {
    std::optional<uint64_t> V = When.known() ? evaluateAt(P, When.E, {}, Params) : std::nullopt;
    if (!V)
      return std::nullopt;
    if (!*V)
      return 0;
  }
  uint64_t Sum = 0;
  for (const EventSite &S : Sites) {
    const Event &E = P.Events[S.Event];
    if (E.Barrier.Array != A)
      continue;
    bool Counts = Waits ? E.Kind == EventKind::Wait || E.Kind == EventKind::Probe
                        : E.Kind == EventKind::Arrive || E.Kind == EventKind::ArriveExpectTx ||
                              E.Kind == EventKind::MmaCommit ||
                              E.Kind == EventKind::CpAsyncArrive;
    if (!Counts)
      continue;
    // A try_wait whose result decides a spin loop after it is one wait, counted once: by the
    // probe (the spin runs only when the probe failed, which no parameter decides).
    auto SlowPathOf = [&](const EventSite &Other) {
      const Event &O = P.Events[Other.Event];
      return Other.Loops == S.Loops && O.Barrier.Array == A && O.Barrier.Slot.E == E.Barrier.Slot.E;
    };
    if (Waits) {
      bool Paired = false;
      for (const EventSite &O : Sites) {
        const Event &OE = P.Events[O.Event];
        if (O.Event == S.Event || !SlowPathOf(O))
          continue;
        if (E.Kind == EventKind::Probe && OE.Kind == EventKind::Wait && !OE.When.absent() &&
            !evaluateAt(P, OE.When.E, {}, Params))
          Paired = true;
        if (E.Kind == EventKind::Wait && OE.Kind == EventKind::Probe && !E.When.absent() &&
            !evaluateAt(P, E.When.E, {}, Params))
          Paired = true;
      }
      if (E.Kind == EventKind::Probe && !Paired)
        continue; // a peek that a real wait follows
      if (E.Kind == EventKind::Wait && Paired)
        continue; // counted by its probe
    }
    std::optional<uint64_t> Times = timesRun(P, S, Params);
    std::optional<unsigned> N = Waits ? std::optional<unsigned>(1) : E.Threads.count();
    std::optional<uint64_t> C = Waits || E.Count.absent() ? std::optional<uint64_t>(1)
                                                          : E.Count.constant();
    if (!Times || !N || !C)
      return std::nullopt;
    Sum += *Times * *N * *C;
  }
  if (Waits)
    return Sum;
  const BarrierArray &B = P.Barriers[A];
  std::optional<uint64_t> Init =
      B.InitCounts.empty() ? std::nullopt : B.InitCounts.front().constant();
  if (!Init || !*Init)
    return std::nullopt;
  return Sum / *Init;
}

bool wholeWarpgroups(const ThreadSet &T) {
  if (!T.isExact() || !T.elected().empty())
    return true; // cannot tell; not evidence
  const llvm::BitVector &M = T.members();
  for (unsigned G = 0; G < M.size(); G += 128) {
    unsigned In = 0;
    for (unsigned I = G; I < std::min<unsigned>(G + 128, M.size()); ++I)
      In += M.test(I);
    if (In != 0 && In != std::min<unsigned>(128, M.size() - G))
      return false;
  }
  return true;
}

} // namespace

Diagnosis diagnose(const Protocol &P, const Snapshot &S, const WaitForAnalysis &A,
                   const std::vector<std::vector<EventSite>> &Sites) {
  Diagnosis D;
  auto Found = [&](BugClass C) {
    D.Class = C;
    return D;
  };

  // Threads of one role that parted at a loop whose trip count differs between them (a
  // solver's part of an agent, RoleProgram.h): the threads that run on wait for phases
  // nobody gives any more, or never leave the loop.
  for (const StuckWait &W : S.Stuck) {
    if (W.PartOf.empty())
      continue;
    D.Evidence.push_back(
        "threads " + W.PartThreads + " of " + W.PartOf + " run a loop more often than the role's other "
        "threads (its trip count depends on the thread)" +
        (W.Other.empty() ? ", and wait at iteration " + std::to_string(W.FirstIteration) +
                               " for " + W.Barrier + "[" + std::to_string(W.Slot) +
                               "] parity " + std::to_string(W.Parity) +
                               ", a phase that the roles which finished their count never give"
                         : ": " + W.Other));
    return Found(BugClass::TripCount);
  }

  // Named barriers: several roles on one id, or fewer threads than the count. A named
  // barrier belongs to its CTA: a solver's roles in two CTAs of a cluster (`consumer.0@cta0`,
  // `consumer.0@cta1`) waiting on the same id are two barriers, not one shared.
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    const StuckWait &W = S.Stuck[G];
    if (!W.Named)
      continue;
    // Both waiting with every thread of the CTA is one CTA-wide barrier that some role
    // never reaches (barrier-divergent, below), not two groups sharing an id.
    const unsigned Cta = P.Launch.threads();
    for (unsigned H = G + 1; H < S.Stuck.size(); ++H)
      if (S.Stuck[H].Named && S.Stuck[H].NamedId == W.NamedId && S.Stuck[H].Role != W.Role &&
          solverCta(S.Stuck[H].Role) == solverCta(W.Role) &&
          !(W.NamedThreads == Cta && S.Stuck[H].NamedThreads == Cta)) {
        D.Evidence.push_back(W.Role + " and " + S.Stuck[H].Role + " both wait in bar.sync " +
                             std::to_string(W.NamedId) + " (" + std::to_string(W.NamedThreads) +
                             " and " + std::to_string(S.Stuck[H].NamedThreads) +
                             " threads): two groups share one hardware barrier, so arrivals of "
                             "one complete the other's instance");
        return Found(BugClass::NamedBarrierIdCollision);
      }
  }
  // A CTA-wide barrier that a role waits in and another role never reaches.
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    const StuckWait &W = S.Stuck[G];
    if (!W.Named)
      continue;
    for (const EventSite &Site : A.Matches[G].Waits) {
      const Event &Ev = P.Events[Site.Event];
      // bar.sync 0 (__syncthreads), or another id counting every thread: a group's barrier
      // whose count is the CTA's is the named-barrier-count rule's below.
      bool CtaWide = Ev.Named.Threads.absent() ||
                     (W.NamedId == 0 && Ev.Named.Threads.constant() &&
                      *Ev.Named.Threads.constant() == P.Launch.threads());
      if (!CtaWide)
        continue;
      for (unsigned R = 0; R < Sites.size(); ++R) {
        bool Reaches = std::any_of(Sites[R].begin(), Sites[R].end(),
                                   [&](const EventSite &X) { return X.Event == Site.Event; });
        if (Reaches || P.Roles[R].Body.empty())
          continue;
        D.Evidence.push_back(W.Role + " waits in a CTA-wide bar.sync " +
                             std::to_string(W.NamedId) + " (" + ptxLine(Ev) + ") that " +
                             P.Roles[R].Name + " never reaches");
        return Found(BugClass::BarrierDivergent);
      }
    }
  }
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    const StuckWait &W = S.Stuck[G];
    if (!W.Named)
      continue;
    // Threads that reach this id per the protocol: within a role, its bar.sync sites run one
    // after the other (the largest counts); different roles meet on it together (they add).
    unsigned Reach = 0;
    bool Known = true;
    std::string Who;
    for (unsigned R = 0; R < Sites.size(); ++R) {
      unsigned RoleMax = 0;
      const Event *Where = nullptr;
      for (const EventSite &Site : Sites[R]) {
        const Event &E = P.Events[Site.Event];
        if (E.Kind != EventKind::NamedBarrier)
          continue;
        if (E.Threads.isUnknown())
          Known = false;
        const llvm::BitVector &M = E.Threads.members();
        unsigned N = 0;
        for (unsigned T = 0; T < M.size(); T += 32) {
          bool Warp = false;
          for (unsigned L = T; L < std::min<unsigned>(T + 32, M.size()); ++L)
            Warp |= M.test(L);
          if (!Warp)
            continue;
          std::optional<unsigned> Id = namedIdAt(P, E, T, S.Params);
          if (!Id)
            Known = false;
          else if (*Id == W.NamedId)
            N += 32;
        }
        if (N > RoleMax) {
          RoleMax = N;
          Where = &E;
        }
      }
      if (RoleMax) {
        Reach += RoleMax;
        Who += (Who.empty() ? "" : ", ") + P.Roles[R].Name + " " + std::to_string(RoleMax) +
               " threads (" + ptxLine(*Where) + ")";
      }
    }
    if (Known && Reach < W.NamedThreads) {
      D.Evidence.push_back("bar.sync " + std::to_string(W.NamedId) + " counts " +
                           std::to_string(W.NamedThreads) + " threads, but only " +
                           std::to_string(Reach) + " reach id " + std::to_string(W.NamedId) +
                           (Who.empty() ? "" : ": " + Who));
      return Found(BugClass::NamedBarrierCount);
    }
  }

  // Mbarriers nobody completes, or whose phases cannot complete.
  std::set<unsigned> Arrays;
  for (const StuckWait &W : S.Stuck)
    if (!W.Named)
      if (std::optional<unsigned> Arr = barrierArray(P, W.Barrier))
        Arrays.insert(*Arr);
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    if (S.Stuck[G].Named || !barrierArray(P, S.Stuck[G].Barrier))
      continue;
    bool Any = std::any_of(A.Edges.begin(), A.Edges.end(),
                           [&](const WaitEdge &E) { return E.From == G; });
    if (!Any) {
      D.Evidence.push_back(S.Stuck[G].Role + " waits on " + S.Stuck[G].Barrier + "[" +
                           std::to_string(S.Stuck[G].Slot) +
                           "], but no role arrives on it or completes bytes on it");
      return Found(BugClass::NoArriver);
    }
  }
  for (unsigned Arr : Arrays) {
    const BarrierArray &B = P.Barriers[Arr];
    std::optional<uint64_t> Init =
        B.InitCounts.empty() ? std::nullopt : B.InitCounts.front().constant();
    std::string Who;
    std::optional<uint64_t> Per = arrivalsPerPhase(P, Arr, Sites, Who);
    if (Init && Per && *Per && *Per != *Init) {
      D.Evidence.push_back(B.Name + " is initialized for " + std::to_string(*Init) +
                           " arrivals per phase, but one k-tile gives it " +
                           std::to_string(*Per) + ": " + Who);
      return Found(BugClass::ArrivalCount);
    }
    uint64_t Expected = 0, Delivered = 0;
    std::string Detail;
    if (bytesMismatch(P, Arr, Sites, Expected, Delivered, Detail)) {
      D.Evidence.push_back(B.Name + " expects " + std::to_string(Expected) +
                           " bytes per phase, but its copies deliver " +
                           std::to_string(Delivered) + ": " + Detail +
                           (Expected > Delivered ? "; the tx-count never reaches 0"
                                                 : "; the tx-count goes below 0"));
      return Found(BugClass::TxBytes);
    }
  }

  // Roles out of step: a ring lets one side run at most its stage count ahead.
  for (const WaitEdge &E : A.Edges) {
    if (E.State != PeerState::Stuck)
      continue;
    const StuckWait &W = S.Stuck[E.From];
    std::optional<unsigned> Arr = W.Named ? std::nullopt : barrierArray(P, W.Barrier);
    if (!Arr)
      continue;
    for (unsigned H : E.To) {
      const StuckWait &V = S.Stuck[H];
      uint64_t Gap = W.FirstIteration > V.FirstIteration ? W.FirstIteration - V.FirstIteration
                                                         : V.FirstIteration - W.FirstIteration;
      if (!V.Named && Gap > P.Barriers[*Arr].Slots) {
        D.Evidence.push_back(W.Role + " is at iteration " + std::to_string(W.FirstIteration) +
                             " and " + V.Role + " at " + std::to_string(V.FirstIteration) +
                             " of a " + std::to_string(P.Barriers[*Arr].Slots) +
                             "-slot ring: more than a ring apart, so their stage and phase "
                             "counters disagree (one restarts where the other carries on)");
        return Found(BugClass::PhaseSkip);
      }
    }
  }

  // A solver's wait in one CTA of a cluster whose completers run only in other CTAs (B4's
  // MMA runs in the pair's leader and commits to its own barrier only): nobody in that CTA
  // arrives on it.
  for (unsigned G = 0; G < S.Stuck.size() && P.Analysis; ++G) {
    const StuckWait &W = S.Stuck[G];
    std::optional<unsigned> Rank = solverCta(W.Role);
    std::optional<unsigned> Arr = W.Named ? std::nullopt : barrierArray(P, W.Barrier);
    if (!Rank || !Arr)
      continue;
    ExprContext &Ctx = P.Analysis->context();
    std::string Where;
    bool NoneHere = false;
    for (const WaitEdge &E : A.Edges) {
      if (E.From != G)
        continue;
      const ProtocolValue &When = P.Roles[E.Role].When;
      // A completer whose arrivals reach other CTAs (a multicast commit or copy whose mask
      // has this rank, or one whose mask is not known; a peer's barrier of this rank) may
      // complete this one from where it runs. B4's seeded bug: the commit's mask is 0b01.
      bool Reaches = llvm::any_of(Sites[E.Role], [&](const EventSite &Site) {
        const Event &Ev = P.Events[Site.Event];
        if (Ev.Barrier.Array != *Arr)
          return false;
        if (!Ev.CtaMask.absent() || Ev.Multicast) {
          std::optional<uint64_t> Mask = Ev.CtaMask.constant();
          if (!Mask || (*Mask >> *Rank & 1))
            return true;
        }
        if (!Ev.Barrier.PeerRank.absent()) {
          std::optional<uint64_t> Peer = Ev.Barrier.PeerRank.constant();
          if (!Peer || *Peer == *Rank)
            return true;
        }
        return false;
      });
      if (E.State == PeerState::Self || !When.known() || Reaches) {
        NoneHere = false;
        break;
      }
      const Expr *Here = Ctx.substitute(When.E, Ctx.specialRegister(SpecialRegister::ClusterCtaRank),
                                        Ctx.constant(*Rank, 32));
      std::optional<uint64_t> V = evaluateAt(P, Here, {}, S.Params);
      if (!V || *V) {
        NoneHere = false;
        break;
      }
      NoneHere = true;
      Where += (Where.empty() ? "" : ", ") + P.Roles[E.Role].Name + " runs where " +
               P.exprString(When.E);
      for (const EventSite &Site : Sites[E.Role]) {
        const Event &Ev = P.Events[Site.Event];
        if (Ev.Barrier.Array == *Arr && Ev.CtaMask.constant())
          Where += " and its " + Ev.Opcode + " (" + ptxLine(Ev) + ") reaches the CTAs of mask " +
                   formatCtaMask(P, Ev.CtaMask);
      }
    }
    if (!NoneHere)
      continue;
    D.Evidence.push_back(W.Role + " waits on " + W.Barrier + "[" + std::to_string(W.Slot) +
                         "], but no role that completes it runs in CTA rank " +
                         std::to_string(*Rank) + " of the cluster: " + Where);
    return Found(BugClass::NoArriver);
  }

  // Waits whose completers have left or went silent.
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    const StuckWait &W = S.Stuck[G];
    if (W.Named)
      continue;
    std::vector<const WaitEdge *> Others;
    for (const WaitEdge &E : A.Edges)
      if (E.From == G && E.State != PeerState::Self)
        Others.push_back(&E);
    if (Others.empty() ||
        !std::all_of(Others.begin(), Others.end(),
                     [](const WaitEdge *E) { return E->State == PeerState::Silent; }))
      continue;
    // Phases the completers give the barrier over the run, against the waits on it.
    std::optional<unsigned> Arr = barrierArray(P, W.Barrier);
    std::optional<uint64_t> Waits;
    for (unsigned R : A.Matches[G].Roles)
      if (std::optional<uint64_t> N = totalOver(P, R, Sites[R], *Arr, true, S.Params))
        Waits = Waits.value_or(0) + *N;
    std::optional<uint64_t> Phases = 0;
    std::string Who;
    for (const WaitEdge *E : Others) {
      std::optional<uint64_t> N = totalOver(P, E->Role, Sites[E->Role], *Arr, false, S.Params);
      if (!N) {
        Phases.reset();
        break;
      }
      *Phases += *N;
      Who += (Who.empty() ? "" : ", ") + P.Roles[E->Role].Name;
    }
    if (Waits && Phases && *Phases < *Waits) {
      D.Evidence.push_back("at the captured parameters, " + Who + " completes " + W.Barrier +
                           " " + std::to_string(*Phases) + " times over the run, but " +
                           W.Role + " waits on it " + std::to_string(*Waits) + " times; " +
                           W.Role + " waits at iteration " + std::to_string(W.FirstIteration) +
                           " for a phase nobody completes");
      return Found(BugClass::TripCount);
    }
    // A silent completer that holds a CTA-wide barrier of its own.
    for (const WaitEdge *E : Others)
      for (const EventSite &Site : Sites[E->Role]) {
        const Event &Ev = P.Events[Site.Event];
        if (Ev.Kind != EventKind::NamedBarrier || Site.Loops.empty())
          continue;
        std::optional<uint64_t> Id = Ev.Named.Id.constant();
        bool CtaWide = Ev.Named.Threads.absent() ||
                       (Ev.Named.Threads.constant() &&
                        *Ev.Named.Threads.constant() == P.Launch.threads());
        if (!CtaWide || (Id && *Id != 0))
          continue;
        bool WaiterReaches = false;
        for (unsigned R : A.Matches[G].Roles)
          for (const EventSite &Mine : Sites[R])
            WaiterReaches |= Mine.Event == Site.Event;
        if (WaiterReaches)
          continue;
        D.Evidence.push_back(P.Roles[E->Role].Name + " (silent in the capture) runs a "
                             "CTA-wide bar.sync " + (Id ? std::to_string(*Id) : "?") +
                             " inside its loop (" + ptxLine(Ev) + ") that " + W.Role +
                             " never reaches: it is blocked there, before its arrival");
        return Found(BugClass::BarrierDivergent);
      }
    // Silent roles behind setmaxnreg: a decrease that not every warp of a warpgroup runs.
    for (const Event &Ev : P.Events) {
      if (Ev.Kind != EventKind::Setmaxnreg || Ev.Increase || wholeWarpgroups(Ev.Threads))
        continue;
      std::string Silent;
      for (const WaitEdge *E : Others)
        Silent += (Silent.empty() ? "" : ", ") + P.Roles[E->Role].Name;
      D.Evidence.push_back("setmaxnreg.dec (" + ptxLine(Ev) + ") runs in " + Ev.Threads.str() +
                           ", not in whole warpgroups; the registers of the warps that skip "
                           "it are never released, so " + Silent +
                           " (silent) can stay blocked in setmaxnreg.inc before any arrival");
      return Found(BugClass::SetmaxnregNonuniform);
    }
  }

  // A cycle in which every wait is for the first phase, each completed only after the
  // other's wait: both sides start at the same parity.
  if (!A.Cycle.empty()) {
    bool First = true;
    for (unsigned G : A.Cycle)
      First &= !S.Stuck[G].Named && S.Stuck[G].LastIteration == 0 && S.Stuck[G].Parity == 0;
    bool After = true;
    for (const WaitEdge &E : A.Edges)
      if (E.State == PeerState::Stuck &&
          std::count(A.Cycle.begin(), A.Cycle.end(), E.From))
        After &= E.CompletesAfterItsWait.value_or(false);
    if (First && After) {
      std::string Waits;
      for (unsigned G : A.Cycle)
        Waits += (Waits.empty() ? "" : " and ") + S.Stuck[G].Role + " waits " +
                 S.Stuck[G].Barrier + "[" + std::to_string(S.Stuck[G].Slot) + "] parity 0";
      D.Evidence.push_back("at iteration 0, " + Waits +
                           ": each waits for the first phase of a barrier that only the "
                           "other completes, after its own wait; the barriers start in "
                           "phase 0, so one of the two waits must be for parity 1");
      return Found(BugClass::InitialPhase);
    }
  }

  D.Evidence.push_back(A.Cycle.empty()
                           ? "no cycle among the stuck waits, and no rule of a known class "
                             "matched the protocol"
                           : "the stuck waits form a cycle, but no rule of a known class "
                             "matched the protocol");
  return Found(BugClass::Unclassified);
}

} // namespace analyzer
} // namespace wsv
