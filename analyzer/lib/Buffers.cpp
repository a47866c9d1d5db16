//===- Buffers.cpp - shared-memory stage buffers from the async copies ------------===//
#include "wsv/analyzer/Barriers.h"

#include "Sampling.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

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
  std::vector<int64_t> Offsets; ///< sampled byte offsets from the base; just the constant
                                ///< when the varying part cannot be enumerated
};

void enumerate(const Sampler &S, Access &A) {
  if (A.Parts.Varying)
    if (std::optional<std::set<uint64_t>> Values = S.values(A.Parts.Varying, 2048)) {
      std::set<int64_t> Offsets;
      for (uint64_t V : *Values)
        Offsets.insert(A.Parts.Offset + asSigned(V, A.Parts.Varying->width()));
      A.Offsets.assign(Offsets.begin(), Offsets.end());
      return;
    }
  A.Offsets = {A.Parts.Offset};
}

struct Layout {
  int64_t Lo = 0, Hi = 0;
  uint64_t Stride = 0; ///< 0: one slot
  unsigned Buffer = 0;
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

BufferIdentity wsv::analyzer::identifyBuffers(const ptx::Module &M, ExprContext &Ctx,
                                              const LaunchShape &Launch,
                                              llvm::ArrayRef<BufferAccess> Accesses,
                                              llvm::ArrayRef<uint64_t> MaxIterations) {
  BufferIdentity Out;
  Out.Refs.resize(Accesses.size());
  Sampler S(Launch, MaxIterations);

  std::vector<const Expr *> Bases;
  llvm::DenseMap<const Expr *, std::vector<Access>> ByBase;
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
    auto [It, New] = ByBase.try_emplace(A.Parts.Base);
    if (New)
      Bases.push_back(A.Parts.Base);
    It->second.push_back(std::move(A));
  }

  for (const Expr *Base : Bases) {
    std::vector<Access> &Group = ByBase[Base];
    for (Access &A : Group)
      enumerate(S, A);

    // Rings: the offsets of one copy instruction at their common stride; copies with the
    // same stride and the same start within a slot fill the same buffer.
    std::map<std::pair<uint64_t, int64_t>, Layout> Rings; // (stride, start mod stride)
    for (const Access &A : Group) {
      if (!Accesses[A.Input].Defines || A.Offsets.size() < 2)
        continue;
      uint64_t Stride = 0;
      for (int64_t O : A.Offsets)
        Stride = std::gcd(Stride, static_cast<uint64_t>(O - A.Offsets.front()));
      int64_t Phase = ((A.Offsets.front() % int64_t(Stride)) + int64_t(Stride)) % int64_t(Stride);
      auto [It, New] = Rings.try_emplace({Stride, Phase});
      Layout &L = It->second;
      if (New) {
        L.Lo = A.Offsets.front();
        L.Hi = A.Offsets.back();
        L.Stride = Stride;
      }
      L.Lo = std::min(L.Lo, A.Offsets.front());
      L.Hi = std::max(L.Hi, A.Offsets.back());
    }
    std::vector<Layout> Layouts;
    for (auto &[Key, L] : Rings)
      Layouts.push_back(L);
    // Copies at one constant offset that no ring covers are buffers of one slot.
    std::set<int64_t> Singles;
    for (const Access &A : Group) {
      if (!Accesses[A.Input].Defines || A.Offsets.size() != 1)
        continue;
      int64_t O = A.Offsets.front();
      bool Covered = llvm::any_of(Layouts, [&](const Layout &L) {
        return L.Stride && O >= L.Lo && O <= L.Hi &&
               static_cast<uint64_t>(O - L.Lo) % L.Stride == 0;
      });
      if (!Covered)
        Singles.insert(O);
    }
    for (int64_t O : Singles)
      Layouts.push_back(Layout{O, O, 0, 0});
    std::sort(Layouts.begin(), Layouts.end(),
              [](const Layout &A, const Layout &B) { return A.Lo < B.Lo; });

    // Every slot start of every buffer: a slot's bytes end where the next one begins.
    std::set<int64_t> Starts;
    for (const Layout &L : Layouts)
      for (int64_t O = L.Lo; O <= L.Hi; O += L.Stride ? int64_t(L.Stride) : 1)
        Starts.insert(O);
    std::optional<uint64_t> Declared;
    if (Base->is(ExprKind::Symbol))
      Declared = declaredBytes(M, Group.front().Parts.Symbol);
    for (Layout &L : Layouts) {
      L.Buffer = Out.Buffers.size();
      Buffer B;
      B.Symbol = Group.front().Parts.Symbol.str();
      B.Base = Base;
      B.Offset = L.Lo;
      B.Stride = L.Stride;
      B.Slots = L.Stride ? static_cast<unsigned>((L.Hi - L.Lo) / int64_t(L.Stride)) + 1 : 1;
      auto Next = Starts.upper_bound(L.Lo);
      if (Next != Starts.end())
        B.SlotBytes = static_cast<uint64_t>(*Next - L.Lo);
      else if (Declared && int64_t(*Declared) > L.Lo)
        B.SlotBytes = *Declared - static_cast<uint64_t>(L.Lo);
      Out.Buffers.push_back(B);
    }

    // Every access, defining or not, goes to the buffer that holds all its offsets.
    for (const Access &A : Group) {
      BufferRef &R = Out.Refs[A.Input];
      R.Address = Accesses[A.Input].Address;
      const Layout *Found = nullptr;
      for (const Layout &L : Layouts) {
        const Buffer &B = Out.Buffers[L.Buffer];
        uint64_t Bytes = B.SlotBytes.value_or(L.Stride ? L.Stride : 1);
        if (llvm::all_of(A.Offsets, [&](int64_t O) { return L.contains(O, Bytes); })) {
          Found = &L;
          break;
        }
      }
      if (!Found) {
        R.Unresolved = "not in a buffer that an async copy fills or drains";
        continue;
      }
      const Buffer &B = Out.Buffers[Found->Buffer];
      R.Buffer = Found->Buffer;
      int64_t Delta = A.Parts.Offset - B.Offset;
      unsigned W = R.Address->width();
      if (!B.Stride) {
        R.Slot = ProtocolValue::of(Ctx.constant(0, W));
        R.ByteOffset = Delta;
        continue;
      }
      int64_t Stride = static_cast<int64_t>(B.Stride);
      R.ByteOffset = ((Delta % Stride) + Stride) % Stride;
      if (!A.Parts.Varying) {
        R.Slot = ProtocolValue::of(Ctx.constant(static_cast<uint64_t>((Delta - R.ByteOffset) / Stride), W));
        continue;
      }
      unsigned VW = A.Parts.Varying->width();
      const Expr *Bytes =
          Ctx.add(A.Parts.Varying, Ctx.constant(static_cast<uint64_t>(Delta - R.ByteOffset), VW));
      R.Slot = ProtocolValue::of(Ctx.udiv(Bytes, Ctx.constant(B.Stride, VW)));
    }
  }
  return Out;
}
