//===- ProtocolOperands.cpp - barrier and buffer identity, bytes, init counts -----===//
//
// Step 2 of the protocol builder. Every barrier operand of every event goes to
// identifyBarriers() at once (arrays are found from all their accesses together), every
// async copy's shared-memory end to identifyBuffers(); then the inits fill in the arrays'
// expected counts slot by slot, and TMA copies get their bytes: the tensor map's box when
// the kernel's launch description gives it, else at most the destination slot.
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "Sampling.h"

#include "wsv/analyzer/Barriers.h"

#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

void resolveBarriers(BuildState &S) {
  std::vector<const Expr *> Addresses;
  for (const EventInfo &I : S.Info)
    Addresses.push_back(I.BarrierAddress);
  BarrierIdentity Id =
      identifyBarriers(S.M, &S.F, S.ctx(), S.P.Launch, Addresses, S.P.MaxIterations);
  S.P.Barriers = std::move(Id.Arrays);
  for (unsigned E = 0; E < S.P.Events.size(); ++E)
    if (Id.Refs[E].present())
      S.P.Events[E].Barrier = std::move(Id.Refs[E]);

  // Expected counts, slot by slot: an init names one slot, or several from a loop.
  Sampler Samples(S.P.Launch, S.P.MaxIterations);
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    Event &Ev = S.P.Events[E];
    if (Ev.Kind != EventKind::Init || !Ev.Barrier.resolved() || !Ev.Barrier.Slot.known())
      continue;
    BarrierArray &A = S.P.Barriers[Ev.Barrier.Array];
    A.InitEvents.push_back(E);
    std::optional<std::set<uint64_t>> Slots = Samples.values(Ev.Barrier.Slot.E);
    if (!Slots)
      continue;
    for (uint64_t Slot : *Slots)
      if (Slot < A.InitCounts.size())
        A.InitCounts[Slot] =
            Ev.Count.known() ? Ev.Count
                             : ProtocolValue::unknown("the init count is not known: " +
                                                      Ev.Count.Unknown);
  }
}

void resolveBuffers(BuildState &S) {
  std::vector<BufferAccess> Accesses;
  struct Use {
    unsigned Event;
    enum { Dst, Src, Read } Which;
    unsigned ReadIndex = 0;
  };
  std::vector<Use> Uses;
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    const EventInfo &I = S.Info[E];
    EventKind K = S.P.Events[E].Kind;
    bool Copy = K == EventKind::AsyncLoad || K == EventKind::AsyncStore ||
                K == EventKind::AsyncCopy;
    // Copies of one tensor map in one direction are one family of buffers.
    unsigned Family = (static_cast<unsigned>(K) << 8) | (I.TensorMapParam ? *I.TensorMapParam + 1 : 0);
    // TMEM allocation writes the column address into shared memory: not a buffer.
    if (I.DstAddress && K != EventKind::Alloc) {
      Accesses.push_back({I.DstAddress, Copy, Family, S.P.Events[E].Threads.members()});
      Uses.push_back({E, Use::Dst});
    }
    if (I.SrcAddress) {
      Accesses.push_back({I.SrcAddress, Copy, Family, S.P.Events[E].Threads.members()});
      Uses.push_back({E, Use::Src});
    }
    for (unsigned R = 0; R < I.ReadAddresses.size(); ++R) {
      Accesses.push_back({I.ReadAddresses[R], false, 0, S.P.Events[E].Threads.members()});
      Uses.push_back({E, Use::Read, R});
    }
  }
  // Each counted loop's trip count, for the accesses in a thread's own loop over its words.
  std::vector<LoopTrip> Trips(S.FA.loops().size());
  for (const Loop &L : S.FA.loops().loops()) {
    const TripCount &T = S.values().loopSummary(L.Index).Trip;
    if (!T.isCounted() || !T.Iterations || T.Forever)
      continue;
    Trips[L.Index].Iterations = S.values().closedForm(T.Iterations);
    for (const TripCondition &C : T.Conditions)
      if (!C.Discharged)
        Trips[L.Index].Conditions.push_back(S.values().closedForm(C.Condition));
  }
  BufferIdentity Id =
      identifyBuffers(S.M, &S.F, S.ctx(), S.P.Launch, Accesses, S.P.MaxIterations, Trips);
  S.P.Buffers = std::move(Id.Buffers);
  // The shared word tcgen05.alloc writes the TMEM address into is read back by every thread
  // that uses TMEM: say so rather than that no copy fills it. Where that word also lies in a
  // buffer (Triton reuses the start of dynamic shared memory for its epilogue tile), reading
  // it back is still not a read of the buffer's data.
  for (unsigned E = 0; E < S.P.Events.size(); ++E)
    if (S.P.Events[E].Kind == EventKind::Alloc && S.Info[E].DstAddress)
      for (unsigned U = 0; U < Uses.size(); ++U)
        if (Uses[U].Which != Use::Dst && Id.Refs[U].Address == S.Info[E].DstAddress) {
          BufferRef Word;
          Word.Address = Id.Refs[U].Address;
          Word.Unresolved = "the TMEM address that tcgen05.alloc writes there";
          Word.AllocWord = true;
          Id.Refs[U] = std::move(Word);
        }
  for (unsigned U = 0; U < Uses.size(); ++U) {
    Event &Ev = S.P.Events[Uses[U].Event];
    switch (Uses[U].Which) {
    case Use::Dst:
      Ev.Dst = std::move(Id.Refs[U]);
      break;
    case Use::Src:
      Ev.Src = std::move(Id.Refs[U]);
      break;
    case Use::Read:
      Ev.Reads.push_back(std::move(Id.Refs[U]));
      break;
    }
  }
}

/// The bytes every expect_tx on copy Copy's barrier names, where Copy is the only copy that
/// completes on that barrier and they all name one constant; nothing otherwise.
std::optional<uint64_t> expectedAlone(const BuildState &S, unsigned Copy) {
  const Event &C = S.P.Events[Copy];
  if (!C.Barrier.resolved() || !C.Barrier.Slot.known() || C.Threads.count() != 1u)
    return std::nullopt;
  std::optional<uint64_t> Expected;
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    const Event &Ev = S.P.Events[E];
    if (E == Copy || Ev.Barrier.Array != C.Barrier.Array)
      continue;
    if (Ev.Kind == EventKind::AsyncLoad || Ev.Kind == EventKind::MmaCommit ||
        Ev.Kind == EventKind::CpAsyncArrive)
      return std::nullopt; // another completes on it: the bytes are shared
    if (Ev.Kind != EventKind::ArriveExpectTx && Ev.Kind != EventKind::ExpectTx)
      continue;
    std::optional<uint64_t> B = Ev.TxBytes.constant();
    if (!B || !*B || (Expected && *Expected != *B) || Ev.Threads.count() != 1u)
      return std::nullopt;
    Expected = B;
  }
  return Expected;
}

/// Bytes of TMA copies: the box from the launch description, else the slot it lands in.
void resolveBytes(BuildState &S) {
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    Event &Ev = S.P.Events[E];
    const EventInfo &I = S.Info[E];
    if ((Ev.Kind != EventKind::AsyncLoad && Ev.Kind != EventKind::AsyncStore) ||
        Ev.BytesFrom != BytesOrigin::None)
      continue;
    if (S.Spec && I.TensorMapParam) {
      auto It = S.Spec->TensorBoxBytes.find(*I.TensorMapParam);
      if (It != S.Spec->TensorBoxBytes.end()) {
        Ev.Bytes = ProtocolValue::of(S.ctx().constant(It->second, 32));
        Ev.BytesFrom = BytesOrigin::TensorBox;
        continue;
      }
    }
    const BufferRef &Smem = Ev.Kind == EventKind::AsyncLoad ? Ev.Dst : Ev.Src;
    if (Smem.resolved() && S.P.Buffers[Smem.Buffer].SlotBytes) {
      uint64_t Bound = *S.P.Buffers[Smem.Buffer].SlotBytes - Smem.ByteOffset;
      Ev.Bytes = ProtocolValue::of(S.ctx().constant(Bound, 32));
      Ev.BytesFrom = BytesOrigin::AllocationBound;
      continue;
    }
    // The last buffer of its shared memory has no next slot to end it; barriers that start
    // after it do (Triton's query tile, right before its barriers). Only the copy's bytes
    // take that bound: other data may lie between, so it is not the buffer's size.
    if (Smem.resolved() && !S.P.Buffers[Smem.Buffer].Stride) {
      const Buffer &B = S.P.Buffers[Smem.Buffer];
      int64_t Start = B.Offset + Smem.ByteOffset;
      std::optional<uint64_t> Bound;
      for (const BarrierArray &A : S.P.Barriers)
        if (A.Base == B.Base && A.Offset > Start &&
            (!Bound || uint64_t(A.Offset - Start) < *Bound))
          Bound = uint64_t(A.Offset - Start);
      if (Bound) {
        // A bound past the bytes the copy's barrier expects is not its box: taken as the
        // box, it leaves the barrier's tx count below 0 in every launch, a hang that only
        // the guess makes (Triton's query tile: 16384 bytes expected, 17776 up to the
        // barriers). Where the copy alone completes its barrier, it moves what that expects.
        if (std::optional<uint64_t> Expected = expectedAlone(S, E); Expected && *Expected < *Bound) {
          Ev.Bytes = ProtocolValue::of(S.ctx().constant(*Expected, 32));
          Ev.BytesFrom = BytesOrigin::BarrierExpect;
          continue;
        }
        Ev.Bytes = ProtocolValue::of(S.ctx().constant(*Bound, 32));
        Ev.BytesFrom = BytesOrigin::AllocationBound;
        continue;
      }
    }
    Ev.BytesFrom = BytesOrigin::Unknown;
    Ev.Bytes = ProtocolValue::unknown(
        "the tensor map's box is not in the PTX and no launch description gives it");
  }
}

/// Columns of tensor memory: a TMEM address is the one tcgen05.alloc wrote into shared
/// memory (loaded back by its users) plus a column in the low 16 bits and a lane in the high
/// ones. With that load counted as 0 what is left is the column and lane, which each launch
/// evaluates; an address that reads anything else stays unknown (the whole of TMEM).
void resolveTmemColumns(BuildState &S) {
  std::set<const Expr *> Words;
  for (unsigned E = 0; E < S.P.Events.size(); ++E)
    if (S.P.Events[E].Kind == EventKind::Alloc && S.Info[E].DstAddress)
      Words.insert(S.Info[E].DstAddress);
  if (Words.empty())
    return;
  ExprContext &Ctx = S.ctx();
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    const Expr *Address = S.Info[E].TmemAddress;
    if (!Address)
      continue;
    bool Based = false;
    const Expr *Relative = Ctx.rewrite(Address, [&](const Expr *N) -> const Expr * {
      if (N->is(ExprKind::Load) && Words.count(S.values().closedForm(N->op(0)))) {
        Based = true;
        return Ctx.constant(0, N->width());
      }
      return nullptr;
    });
    if (!Based || Relative->mentions([](const Expr *L) {
          return L->is(ExprKind::Load) || L->is(ExprKind::Opaque);
        }))
      continue;
    S.P.Events[E].TmemColumn = ProtocolValue::of(
        Ctx.bitAnd(Relative, Ctx.constant(0xffff, Relative->width())));
  }
}

} // namespace

void wsv::analyzer::resolveOperands(BuildState &S) {
  // Loops that a constant bounds (a prefill of min(K / 64, 4)) are sampled only that far.
  const LoopInfo &Loops = S.FA.loops();
  S.P.MaxIterations.assign(Loops.size(), UINT64_MAX);
  for (const Loop &L : Loops.loops()) {
    const TripCount &T = S.values().loopSummary(L.Index).Trip;
    if (T.isCounted() && T.Iterations)
      S.P.MaxIterations[L.Index] = S.values().closedForm(T.Iterations)->range().Hi;
  }
  resolveBarriers(S);
  resolveBuffers(S);
  resolveBytes(S);
  resolveTmemColumns(S);
}
