//===- Barriers.cpp - mbarrier arrays from the addresses every operand computes ----===//
#include "wsv/analyzer/Barriers.h"

#include "Sampling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// An mbarrier object is 8 bytes (PTX ISA, "Size and alignment of mbarrier object").
constexpr uint64_t MbarrierBytes = 8;
/// Arrays larger than this are not rings of barriers; such an index stays unresolved.
constexpr uint64_t MaxSlots = 1024;

int64_t asSigned(uint64_t V, unsigned Width) {
  if (Width >= 64)
    return static_cast<int64_t>(V);
  uint64_t Sign = 1ull << (Width - 1);
  return static_cast<int64_t>((V ^ Sign) - Sign);
}

struct Access {
  unsigned Input = 0;
  AddressParts Parts;
  std::vector<int64_t> Offsets; ///< every byte offset from the base it can take, sorted
  std::string Unresolved;
};

/// The byte offsets an access can take, from its constant and the values of its varying part.
void enumerateOffsets(const Sampler &S, Access &A) {
  const AddressParts &P = A.Parts;
  if (!P.Varying) {
    A.Offsets = {P.Offset};
    return;
  }
  unsigned Width = P.Varying->width();
  std::set<int64_t> Offsets;
  if (std::optional<std::set<uint64_t>> Values = S.values(P.Varying)) {
    for (uint64_t V : *Values)
      Offsets.insert(P.Offset + asSigned(V, Width));
  } else {
    // Not enumerable (it reads a value the analysis does not know): its range, if small.
    URange R = P.Varying->range();
    if (R.Hi - R.Lo >= MaxSlots * MbarrierBytes) {
      A.Unresolved = "the barrier index cannot be bounded";
      return;
    }
    for (uint64_t V = R.Lo; V <= R.Hi; V += MbarrierBytes)
      Offsets.insert(P.Offset + static_cast<int64_t>(V));
  }
  A.Offsets.assign(Offsets.begin(), Offsets.end());
}

BarrierArray makeArray(const AddressParts &P, int64_t First, uint64_t Stride, uint64_t Slots,
                       BarrierArray::SlotsOrigin From) {
  BarrierArray B;
  B.Base = P.Base;
  B.Symbol = P.Symbol.str();
  B.Offset = First;
  B.Stride = Stride;
  B.Slots = static_cast<unsigned>(Slots);
  B.SlotsFrom = From;
  B.InitCounts.assign(B.Slots, ProtocolValue::unknown("no mbarrier.init found for this slot"));
  return B;
}

/// The slot of Array an access names: (offset - first) / stride, as an expression.
BarrierRef refer(ExprContext &Ctx, const Access &A, const BarrierArray &Array, unsigned Index,
                 const Expr *Address) {
  BarrierRef R;
  R.Array = Index;
  R.Address = Address;
  if (A.Parts.Rank)
    R.PeerRank = ProtocolValue::of(A.Parts.Rank);
  int64_t Delta = A.Parts.Offset - Array.Offset;
  if (!A.Parts.Varying) {
    R.Slot = ProtocolValue::of(
        Ctx.constant(static_cast<uint64_t>(Delta) / Array.Stride, Address->width()));
    return R;
  }
  unsigned W = A.Parts.Varying->width();
  const Expr *Bytes = Ctx.add(A.Parts.Varying, Ctx.constant(static_cast<uint64_t>(Delta), W));
  R.Slot = ProtocolValue::of(Ctx.udiv(Bytes, Ctx.constant(Array.Stride, W)));
  return R;
}

} // namespace

BarrierIdentity wsv::analyzer::identifyBarriers(const ptx::Module &M, const ptx::Function *F,
                                                ExprContext &Ctx,
                                                const LaunchShape &Launch,
                                                llvm::ArrayRef<const Expr *> Addresses,
                                                llvm::ArrayRef<uint64_t> MaxIterations) {
  BarrierIdentity Out;
  Out.Refs.resize(Addresses.size());
  Sampler S(Launch, MaxIterations);

  // Accesses grouped by base, bases in the order they first appear.
  std::vector<const Expr *> Bases;
  llvm::DenseMap<const Expr *, std::vector<Access>> ByBase;
  for (unsigned I = 0; I < Addresses.size(); ++I) {
    if (!Addresses[I])
      continue;
    Access A;
    A.Input = I;
    A.Parts = splitAddress(Ctx, Addresses[I]);
    if (!A.Parts.Base) {
      Out.Refs[I].Address = Addresses[I];
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
    const AddressParts &First = Group.front().Parts;

    // A declared variable is one array, whatever its accesses look like.
    std::optional<uint64_t> Declared;
    if (Base->is(ExprKind::Symbol))
      Declared = declaredBytes(M, F, First.Symbol);
    if (Declared && *Declared >= MbarrierBytes) {
      unsigned Index = Out.Arrays.size();
      Out.Arrays.push_back(makeArray(First, 0, MbarrierBytes,
                                     std::max<uint64_t>(1, *Declared / MbarrierBytes),
                                     *Declared > MbarrierBytes
                                         ? BarrierArray::SlotsOrigin::Declaration
                                         : BarrierArray::SlotsOrigin::Single));
      Out.Arrays.back().Name = sourceVariableName(First.Symbol);
      Out.Arrays.back().NameFrom = NameOrigin::Symbol;
      for (const Access &A : Group)
        Out.Refs[A.Input] = refer(Ctx, A, Out.Arrays[Index], Index, Addresses[A.Input]);
      continue;
    }

    // Otherwise: accesses that can name several slots, merged where their offsets meet.
    for (Access &A : Group)
      enumerateOffsets(S, A);
    llvm::EquivalenceClasses<unsigned> Classes;
    std::map<int64_t, unsigned> Owner;
    for (unsigned I = 0; I < Group.size(); ++I) {
      if (Group[I].Offsets.size() < 2)
        continue;
      Classes.insert(I);
      for (int64_t O : Group[I].Offsets) {
        auto [It, New] = Owner.emplace(O, I);
        if (!New)
          Classes.unionSets(It->second, I);
      }
    }
    struct Span {
      int64_t Lo, Hi;
      uint64_t Stride;
      unsigned Array;
    };
    std::vector<Span> Spans;
    std::map<unsigned, unsigned> ArrayOfLeader;
    std::vector<std::pair<int64_t, std::vector<unsigned>>> Pending; // arrays to create, by offset
    for (auto It = Classes.begin(); It != Classes.end(); ++It) {
      if (!It->isLeader())
        continue;
      std::set<int64_t> Offsets;
      std::vector<unsigned> Members;
      for (auto M = Classes.member_begin(It); M != Classes.member_end(); ++M) {
        Members.push_back(*M);
        Offsets.insert(Group[*M].Offsets.begin(), Group[*M].Offsets.end());
      }
      Pending.push_back({*Offsets.begin(), Members});
    }
    std::sort(Pending.begin(), Pending.end());
    for (auto &[Lo, Members] : Pending) {
      std::set<int64_t> Offsets;
      for (unsigned Mem : Members)
        Offsets.insert(Group[Mem].Offsets.begin(), Group[Mem].Offsets.end());
      uint64_t Stride = 0;
      for (int64_t O : Offsets)
        Stride = std::gcd(Stride, static_cast<uint64_t>(O - Lo));
      if (Stride == 0)
        Stride = MbarrierBytes;
      int64_t Hi = *Offsets.rbegin();
      uint64_t Slots = static_cast<uint64_t>(Hi - Lo) / Stride + 1;
      if (Slots > MaxSlots) {
        for (unsigned Mem : Members) {
          Out.Refs[Group[Mem].Input].Address = Addresses[Group[Mem].Input];
          Out.Refs[Group[Mem].Input].Unresolved = "the barrier index spans too many slots";
        }
        continue;
      }
      unsigned Index = Out.Arrays.size();
      Out.Arrays.push_back(
          makeArray(Group[Members.front()].Parts, Lo, Stride, Slots,
                    BarrierArray::SlotsOrigin::Accesses));
      Spans.push_back({Lo, Hi, Stride, Index});
      for (unsigned Mem : Members)
        Out.Refs[Group[Mem].Input] =
            refer(Ctx, Group[Mem], Out.Arrays[Index], Index, Addresses[Group[Mem].Input]);
    }

    // Single offsets: a slot of an array found above, or a barrier of their own.
    std::map<int64_t, unsigned> Scalars;
    for (const Access &A : Group) {
      if (A.Offsets.size() >= 2)
        continue;
      if (A.Offsets.empty()) {
        Out.Refs[A.Input].Address = Addresses[A.Input];
        Out.Refs[A.Input].Unresolved = A.Unresolved;
        continue;
      }
      int64_t O = A.Offsets.front();
      const Span *In = nullptr;
      for (const Span &Sp : Spans)
        if (O >= Sp.Lo && O <= Sp.Hi && static_cast<uint64_t>(O - Sp.Lo) % Sp.Stride == 0)
          In = &Sp;
      if (In) {
        Out.Refs[A.Input] = refer(Ctx, A, Out.Arrays[In->Array], In->Array, Addresses[A.Input]);
        continue;
      }
      auto [It, New] = Scalars.try_emplace(O, Out.Arrays.size());
      if (New)
        Out.Arrays.push_back(
            makeArray(A.Parts, O, MbarrierBytes, 1, BarrierArray::SlotsOrigin::Single));
      Out.Refs[A.Input] = refer(Ctx, A, Out.Arrays[It->second], It->second, Addresses[A.Input]);
    }
  }
  return Out;
}
