//===- Buffers.cpp - shared-memory stage buffers from the async copies ------------===//
#include "wsv/analyzer/Barriers.h"

#include "Sampling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

int64_t asSigned(uint64_t V, unsigned Width) {
  if (Width >= 64)
    return static_cast<int64_t>(V);
  uint64_t Sign = 1ull << (Width - 1);
  return static_cast<int64_t>((V ^ Sign) - Sign);
}

struct Access {
  unsigned Input = 0;
  AddressParts Parts;
  /// The terms of the varying part that the loop counters select: which slot.
  const Expr *Slot = nullptr;
  /// The other varying terms: where in the slot.
  const Expr *InSlot = nullptr;
  std::vector<int64_t> Offsets; ///< sampled byte offsets of the slot part from the base; just
                                ///< the constant when it cannot be enumerated
};

bool mentionsIteration(const Expr *E) {
  return E->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); });
}

bool mentionsThreadOrRank(const Expr *E) {
  return E->mentions([](const Expr *L) {
    return L->is(ExprKind::SpecialReg) || L->is(ExprKind::Elect) || L->is(ExprKind::Load) ||
           L->is(ExprKind::Phi) || L->is(ExprKind::Opaque);
  });
}

void collectTerms(const Expr *E, llvm::SmallVectorImpl<const Expr *> &Terms) {
  if (E->is(ExprKind::Add)) {
    for (const Expr *Op : E->ops())
      collectTerms(Op, Terms);
    return;
  }
  Terms.push_back(E);
}

/// A.Offsets from A.Slot: each value it takes, or the constant part alone.
void enumerateSlots(const Sampler &S, Access &A) {
  A.Offsets.clear();
  if (A.Slot)
    if (std::optional<std::set<uint64_t>> Values = S.values(A.Slot, 2048)) {
      std::set<int64_t> Offsets;
      for (uint64_t V : *Values)
        Offsets.insert(A.Parts.Offset + asSigned(V, A.Slot->width()));
      A.Offsets.assign(Offsets.begin(), Offsets.end());
      return;
    }
  A.Offsets = {A.Parts.Offset};
}

void enumerate(ExprContext &Ctx, const Sampler &S, Access &A) {
  if (A.Parts.Varying) {
    llvm::SmallVector<const Expr *, 4> Terms;
    collectTerms(A.Parts.Varying, Terms);
    // Loop counters and kernel parameters pick the slot (a peeled last k-tile reads slot
    // K / 64 % 4); thread ids and CTA ranks move inside it.
    for (const Expr *T : Terms) {
      const Expr *&Into = mentionsIteration(T) || !mentionsThreadOrRank(T) ? A.Slot : A.InSlot;
      Into = Into ? Ctx.add(Into, T) : T;
    }
  }
  enumerateSlots(S, A);
}

/// Whether E reads nothing but %tid.x, constants and the iteration numbers Loops allows.
bool threadLevel(const Expr *E, llvm::function_ref<bool(uint64_t)> Loops) {
  return !E->mentions([&](const Expr *L) {
    if (L->isConstant())
      return false;
    if (L->is(ExprKind::SpecialReg))
      return L->specialRegister() != SpecialRegister::TidX;
    if (L->is(ExprKind::IterationVar))
      return !Loops(L->payload());
    return true;
  });
}

/// A's terms in loops whose trip counts read only %tid.x (a thread's loop over its words of a
/// stage, `for (i = tid; i < 1024; i += 128)`, which nvcc unrolls by four into a loop of
/// (1023 - tid) / 512 + 1 passes at 2048 bytes each) moved from the slot part to the thread's
/// part, with the range of that part over every thread of Threads and every iteration the
/// thread runs. std::nullopt where A has no such term, a count or a condition under which it
/// is exact does not hold or is not known for some thread, or there are too many to try.
std::optional<std::pair<Access, std::pair<int64_t, int64_t>>>
withThreadLoops(ExprContext &Ctx, const Sampler &S, const Access &A,
                const llvm::BitVector &Threads, llvm::ArrayRef<LoopTrip> Trips) {
  if (!A.Parts.Varying || Threads.none() || Trips.empty())
    return std::nullopt;
  auto ThreadLoop = [&](uint64_t L) {
    if (L >= Trips.size() || !Trips[L].Iterations)
      return false;
    auto Own = [](uint64_t) { return false; };
    return threadLevel(Trips[L].Iterations, Own) &&
           llvm::all_of(Trips[L].Conditions, [&](const Expr *C) { return threadLevel(C, Own); });
  };
  Access B;
  B.Input = A.Input;
  B.Parts = A.Parts;
  std::set<uint64_t> Loops; // the thread loops whose iterations B.InSlot reads
  llvm::SmallVector<const Expr *, 4> Terms;
  collectTerms(A.Parts.Varying, Terms);
  for (const Expr *T : Terms) {
    bool Inside = threadLevel(T, ThreadLoop) && (mentionsIteration(T) || mentionsThreadOrRank(T));
    if (Inside)
      T->mentions([&](const Expr *L) {
        if (L->is(ExprKind::IterationVar))
          Loops.insert(L->payload());
        return false;
      });
    const Expr *&Into = Inside ? B.InSlot : B.Slot;
    Into = Into ? Ctx.add(Into, T) : T;
  }
  if (Loops.empty())
    return std::nullopt;
  enumerateSlots(S, B);

  const Expr *Tid = Ctx.specialRegister(SpecialRegister::TidX);
  std::vector<uint64_t> Order(Loops.begin(), Loops.end());
  std::vector<uint64_t> Values(Order.size()), Counts(Order.size());
  std::optional<std::pair<int64_t, int64_t>> Range;
  uint64_t Tried = 0;
  for (unsigned T : Threads.set_bits()) {
    uint64_t Thread = T;
    auto Leaf = [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == Tid)
        return Thread;
      if (L->is(ExprKind::IterationVar))
        for (size_t K = 0; K < Order.size(); ++K)
          if (Order[K] == L->payload())
            return Values[K];
      return std::nullopt;
    };
    for (size_t K = 0; K < Order.size(); ++K) {
      const LoopTrip &Trip = Trips[Order[K]];
      for (const Expr *C : Trip.Conditions) {
        std::optional<uint64_t> Holds = ExprContext::evaluate(C, Leaf);
        if (!Holds || !*Holds)
          return std::nullopt;
      }
      std::optional<uint64_t> N = ExprContext::evaluate(Trip.Iterations, Leaf);
      if (!N || *N > 4096)
        return std::nullopt;
      Counts[K] = *N;
    }
    // Every combination of the loops' iteration numbers (an odometer); none where a loop
    // does not run for this thread.
    if (llvm::is_contained(Counts, 0u))
      continue;
    std::fill(Values.begin(), Values.end(), 0);
    for (bool More = true; More;) {
      if (++Tried > (1u << 18))
        return std::nullopt;
      std::optional<uint64_t> V = ExprContext::evaluate(B.InSlot, Leaf);
      if (!V)
        return std::nullopt;
      int64_t O = asSigned(*V, B.InSlot->width());
      Range = Range ? std::make_pair(std::min(Range->first, O), std::max(Range->second, O))
                    : std::make_pair(O, O);
      More = false;
      for (size_t K = 0; K < Order.size() && !More; ++K) {
        if (++Values[K] < Counts[K])
          More = true;
        else
          Values[K] = 0;
      }
    }
  }
  if (!Range)
    return std::nullopt;
  return std::make_pair(std::move(B), *Range);
}

/// The values a term that depends only on %tid.x takes over Threads; std::nullopt when it
/// depends on anything else or Threads is empty.
std::optional<std::pair<int64_t, int64_t>> threadRange(const Expr *InSlot,
                                                      const llvm::BitVector &Threads) {
  if (!InSlot || Threads.none())
    return std::nullopt;
  const Expr *Tid = nullptr;
  bool Other = false;
  InSlot->mentions([&](const Expr *L) {
    if (L->is(ExprKind::SpecialReg) && L->specialRegister() == SpecialRegister::TidX)
      Tid = L;
    else if (!L->isConstant())
      Other = true;
    return false;
  });
  if (!Tid || Other)
    return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> Range;
  for (unsigned T : Threads.set_bits()) {
    std::pair<const Expr *, uint64_t> Leaf{Tid, T};
    std::optional<uint64_t> V = Sampler::evaluate(InSlot, Leaf);
    if (!V)
      return std::nullopt;
    int64_t O = asSigned(*V, InSlot->width());
    Range = Range ? std::make_pair(std::min(Range->first, O), std::max(Range->second, O))
                  : std::make_pair(O, O);
  }
  return Range;
}

struct Layout {
  int64_t Lo = 0, Hi = 0;
  uint64_t Stride = 0; ///< 0: one slot
  unsigned Buffer = 0;
  unsigned Family = 0;
  bool contains(int64_t O, uint64_t SlotBytes) const {
    if (O < Lo)
      return false;
    if (!Stride)
      return static_cast<uint64_t>(O - Lo) < SlotBytes;
    return O < Hi + static_cast<int64_t>(SlotBytes) &&
           static_cast<uint64_t>(O - Lo) % Stride < SlotBytes;
  }
};

} // namespace

BufferIdentity wsv::analyzer::identifyBuffers(const ptx::Module &M, const ptx::Function *F,
                                              ExprContext &Ctx,
                                              const LaunchShape &Launch,
                                              llvm::ArrayRef<BufferAccess> Accesses,
                                              llvm::ArrayRef<uint64_t> MaxIterations,
                                              llvm::ArrayRef<LoopTrip> Trips) {
  BufferIdentity Out;
  Out.Refs.resize(Accesses.size());
  Sampler S(Launch, MaxIterations);

  std::vector<const Expr *> Bases;
  llvm::DenseMap<const Expr *, std::vector<Access>> ByBase;
  llvm::StringMap<const Expr *> BySymbol;
  for (unsigned I = 0; I < Accesses.size(); ++I) {
    if (!Accesses[I].Address)
      continue;
    Access A;
    A.Input = I;
    A.Parts = splitAddress(Ctx, Accesses[I].Address);
    if (!A.Parts.Base) {
      Out.Refs[I].Address = Accesses[I].Address;
      Out.Refs[I].Unresolved = "the address does not derive from a shared variable";
      continue;
    }
    // One variable is one group whatever the width of its address: clang reads a stage
    // through a 64-bit `buffers` that its copies name as a 32-bit one, nvcc -G through the
    // generic address of a zero-extended one.
    const Expr *Key = A.Parts.Base, *Sym = Key;
    while (Sym->is(ExprKind::ZExt) || Sym->is(ExprKind::SExt) || Sym->is(ExprKind::Trunc))
      Sym = Sym->op(0);
    if (Sym->is(ExprKind::Symbol))
      Key = BySymbol.try_emplace(Sym->name(), Key).first->second;
    auto [It, New] = ByBase.try_emplace(Key);
    if (New)
      Bases.push_back(Key);
    It->second.push_back(std::move(A));
  }

  for (const Expr *Base : Bases) {
    std::vector<Access> &Group = ByBase[Base];
    for (Access &A : Group)
      enumerate(Ctx, S, A);

    // Rings: the offsets of one copy instruction at their common stride; copies of one
    // family with the same stride and start within a slot fill the same buffer.
    std::map<std::tuple<unsigned, uint64_t, int64_t>, Layout> Rings; // (family, stride, phase)
    for (const Access &A : Group) {
      if (!Accesses[A.Input].Defines || A.Offsets.size() < 2)
        continue;
      uint64_t Stride = 0;
      for (int64_t O : A.Offsets)
        Stride = std::gcd(Stride, static_cast<uint64_t>(O - A.Offsets.front()));
      int64_t Phase = ((A.Offsets.front() % int64_t(Stride)) + int64_t(Stride)) % int64_t(Stride);
      unsigned Family = Accesses[A.Input].Family;
      auto [It, New] = Rings.try_emplace({Family, Stride, Phase});
      Layout &L = It->second;
      if (New) {
        L.Lo = A.Offsets.front();
        L.Hi = A.Offsets.back();
        L.Stride = Stride;
        L.Family = Family;
      }
      L.Lo = std::min(L.Lo, A.Offsets.front());
      L.Hi = std::max(L.Hi, A.Offsets.back());
    }
    std::vector<Layout> Layouts;
    for (auto &[Key, L] : Rings)
      Layouts.push_back(L);
    // Copies at one constant offset (unrolled code) join a ring of their family that they
    // fall in or continue; the rest are buffers of one slot.
    std::map<std::pair<unsigned, int64_t>, bool> Singles;
    for (const Access &A : Group)
      if (Accesses[A.Input].Defines && A.Offsets.size() == 1)
        Singles[{Accesses[A.Input].Family, A.Offsets.front()}] = true;
    for (bool Grew = true; Grew;) {
      Grew = false;
      for (auto It = Singles.begin(); It != Singles.end();) {
        auto [Family, O] = It->first;
        bool Joined = false;
        for (Layout &L : Layouts) {
          if (L.Family != Family || !L.Stride ||
              ((O - L.Lo) % int64_t(L.Stride) + int64_t(L.Stride)) % int64_t(L.Stride))
            continue;
          if (O >= L.Lo && O <= L.Hi) {
            Joined = true;
          } else if (O == L.Hi + int64_t(L.Stride) || O == L.Lo - int64_t(L.Stride)) {
            L.Lo = std::min(L.Lo, O);
            L.Hi = std::max(L.Hi, O);
            Joined = Grew = true;
          }
          if (Joined)
            break;
        }
        It = Joined ? Singles.erase(It) : std::next(It);
      }
    }
    for (auto &[Key, Unused] : Singles)
      Layouts.push_back(Layout{Key.second, Key.second, 0, 0, Key.first});
    std::sort(Layouts.begin(), Layouts.end(),
              [](const Layout &A, const Layout &B) { return A.Lo < B.Lo; });

    // Every slot start of every buffer: a slot's bytes end where the next one begins.
    std::set<int64_t> Starts;
    for (const Layout &L : Layouts)
      for (int64_t O = L.Lo; O <= L.Hi; O += L.Stride ? int64_t(L.Stride) : 1)
        Starts.insert(O);
    std::optional<uint64_t> Declared;
    if (Base->is(ExprKind::Symbol))
      Declared = declaredBytes(M, F, Group.front().Parts.Symbol);
    for (Layout &L : Layouts) {
      L.Buffer = Out.Buffers.size();
      Buffer B;
      B.Symbol = Group.front().Parts.Symbol.str();
      B.Base = Base;
      B.Offset = L.Lo;
      B.Stride = L.Stride;
      B.Slots = L.Stride ? static_cast<unsigned>((L.Hi - L.Lo) / int64_t(L.Stride)) + 1 : 1;
      // The smallest gap from any of its slots to the next start: the last slot of a ring
      // may run into a different buffer sooner than the first runs into the second slot.
      for (unsigned Slot = 0; Slot < B.Slots; ++Slot) {
        int64_t Start = L.Lo + int64_t(Slot) * int64_t(L.Stride);
        auto Next = Starts.upper_bound(Start);
        std::optional<uint64_t> Gap;
        if (Next != Starts.end())
          Gap = static_cast<uint64_t>(*Next - Start);
        else if (Declared && int64_t(*Declared) > Start)
          Gap = *Declared - static_cast<uint64_t>(Start);
        if (Gap && (!B.SlotBytes || *Gap < *B.SlotBytes))
          B.SlotBytes = Gap;
      }
      Out.Buffers.push_back(B);
    }

    // Every access, defining or not, goes to the buffer that holds all its offsets.
    for (const Access &Original : Group) {
      Access A = Original;
      BufferRef &R = Out.Refs[A.Input];
      R.Address = Accesses[A.Input].Address;
      // A copy goes to a buffer of its own family if one holds it; with thread-dependent
      // bytes [Lo, Hi] past each offset, those must fall in the offset's slot too.
      auto find = [&](const Access &A, int64_t Lo, int64_t Hi) -> const Layout * {
        for (bool OwnFamily : {true, false})
          for (const Layout &L : Layouts) {
            if (OwnFamily && (!Accesses[A.Input].Defines ||
                              L.Family != Accesses[A.Input].Family))
              continue;
            const Buffer &B = Out.Buffers[L.Buffer];
            uint64_t Bytes = B.SlotBytes.value_or(L.Stride ? L.Stride : 1);
            auto SlotOf = [&](int64_t O) {
              return L.Stride ? (O - L.Lo) / int64_t(L.Stride) : 0;
            };
            if (llvm::all_of(A.Offsets, [&](int64_t O) {
                  return L.contains(O + Lo, Bytes) && L.contains(O + Hi, Bytes) &&
                         SlotOf(O + Lo) == SlotOf(O + Hi);
                }))
              return &L;
          }
        return nullptr;
      };
      // A part that depends on the thread is placed by the values it takes on the threads
      // that make the access. When they leave the constant part's slot (`tid / 128 * 8192 - 8192` from
      // consumer warpgroups 1 and 2 starts 8192 bytes below what either reads), the smallest
      // moves into the constant part. Without them (a staging tile written by every thread,
      // larger than what is known of its slot) the constant part alone places the access.
      auto ByThreads = [&](Access &A, std::pair<int64_t, int64_t> Range) -> const Layout * {
        if (const Layout *L =
                find(A, std::min<int64_t>(0, Range.first), std::max<int64_t>(0, Range.second)))
          return L;
        Access Shifted = A;
        Shifted.Parts.Offset += Range.first;
        for (int64_t &O : Shifted.Offsets)
          O += Range.first;
        const Layout *L = find(Shifted, 0, Range.second - Range.first);
        if (L) {
          unsigned IW = A.InSlot->width();
          Shifted.InSlot =
              Ctx.add(A.InSlot, Ctx.constant(static_cast<uint64_t>(-Range.first), IW));
          A = std::move(Shifted);
        }
        return L;
      };
      const Layout *Found = nullptr;
      if (auto Range = threadRange(A.InSlot, Accesses[A.Input].Threads))
        Found = ByThreads(A, *Range);
      if (!Found)
        Found = find(A, 0, 0);
      // Only where the forms above place nothing: a slot that a thread's own loop counter
      // picks keeps being placed as before.
      if (!Found)
        if (auto Own = withThreadLoops(Ctx, S, A, Accesses[A.Input].Threads, Trips))
          if ((Found = ByThreads(Own->first, Own->second)))
            A = std::move(Own->first);
      if (!Found) {
        // Outside every buffer, or at a place of one that no slot holds in full: the second
        // must not pass for the first, or stage safety would not check it.
        for (const Layout &L : Layouts) {
          uint64_t Bytes = Out.Buffers[L.Buffer].SlotBytes.value_or(L.Stride ? L.Stride : 1);
          if (llvm::any_of(A.Offsets, [&](int64_t O) { return L.contains(O, Bytes); })) {
            R.InRegionOf = L.Buffer;
            break;
          }
        }
        R.Unresolved = R.InRegionOf == NoIndex
                           ? "not in a buffer that an async copy fills or drains"
                           : "in the region of a buffer that async copies fill or drain, but "
                             "no slot of it holds every byte it may touch";
        continue;
      }
      const Buffer &B = Out.Buffers[Found->Buffer];
      R.Buffer = Found->Buffer;
      if (A.InSlot)
        R.InSlot = ProtocolValue::of(A.InSlot);
      int64_t Delta = A.Parts.Offset - B.Offset;
      unsigned W = R.Address->width();
      if (!B.Stride) {
        R.Slot = ProtocolValue::of(Ctx.constant(0, W));
        R.ByteOffset = Delta;
        continue;
      }
      int64_t Stride = static_cast<int64_t>(B.Stride);
      R.ByteOffset = ((Delta % Stride) + Stride) % Stride;
      if (!A.Slot) {
        R.Slot = ProtocolValue::of(
            Ctx.constant(static_cast<uint64_t>((Delta - R.ByteOffset) / Stride), W));
        continue;
      }
      unsigned VW = A.Slot->width();
      const Expr *Bytes =
          Ctx.add(A.Slot, Ctx.constant(static_cast<uint64_t>(Delta - R.ByteOffset), VW));
      R.Slot = ProtocolValue::of(Ctx.udiv(Bytes, Ctx.constant(B.Stride, VW)));
    }
  }
  return Out;
}
