//===- Barriers.h - barrier and buffer identity from address expressions ----------===//
//
// An mbarrier operand is an address Expr; which barrier it names is its base (a shared
// symbol, or the aligned base of the dynamic `extern .shared` array) plus a byte offset.
// Ring code writes `full[stage]` as base + 8 * stage + constant, with the stage a closed form
// in the loop counters; unrolled code writes the constants. identifyBarriers() looks at every
// barrier operand of a kernel at once and finds the arrays:
//
//  - a base that is a declared shared variable of known size is one array of size / 8 slots
//    (`tma2mma[16]` has 2, `mma2ld` 1), named after the variable (demangled: `_ZZ...E7tma2mma`
//    is `tma2mma`);
//  - otherwise each operand's possible offsets are enumerated (Sampling.h), operands whose
//    offsets overlap belong to one array (so `full[i % 4]` and the constant `full[2]` of an
//    unrolled copy meet), its slots are the offsets' span at their common stride, and
//    operands with a single offset join the array that holds it or stand alone;
//  - `mapa` addresses are a peer CTA's copy of the same barrier: same array, with the rank.
//
// Shared-memory buffers are found the same way from the async copies that fill or drain them
// (TMA load destinations, TMA store sources): slots at the common stride of the offsets the
// loop counters select (what else varies, a CTA rank or a thread id, is a place inside the
// slot), extended by the constant offsets of unrolled copies that continue the progression,
// and the bytes from a slot's start to the next buffer (the most a copy into it can write).
// MMA descriptors and generic accesses are then placed in those buffers.
//
// Names that depend on how roles use a barrier (full, empty) are the builder's to give.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/ThreadSet.h"
#include "wsv/ptx_parser/Module.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// An address taken apart: Base + Offset + Varying, in the CTA of rank Rank.
struct AddressParts {
  const Expr *Base = nullptr;    ///< the terms that mention a symbol; nullptr when none does
  llvm::StringRef Symbol;        ///< the symbol Base mentions
  int64_t Offset = 0;            ///< the constant term, in bytes
  const Expr *Varying = nullptr; ///< the other terms (a stage times a stride); nullptr if none
  const Expr *Rank = nullptr;    ///< mapa's target rank; nullptr for the own CTA
};
AddressParts splitAddress(ExprContext &Ctx, const Expr *Address);

/// `_ZZ11b2_tilus_v3I6__halfEv...E13full_barriers` -> `full_barriers`,
/// `_ZN12_GLOBAL__N_14smemE` -> `smem`; a name that is not mangled comes back unchanged.
std::string sourceVariableName(llvm::StringRef Symbol);

/// Bytes a variable of the module or of F's body declares (`.b8 x[32]` is 32, `.u64 y` is 8;
/// nvcc declares a function's `__shared__` locals inside its body); std::nullopt for `extern`
/// arrays of unknown size and names that are not variables.
std::optional<uint64_t> declaredBytes(const ptx::Module &M, const ptx::Function *F,
                                      llvm::StringRef Symbol);

struct BarrierIdentity {
  std::vector<BarrierArray> Arrays; ///< Name set from symbols; InitCounts sized to Slots
  std::vector<BarrierRef> Refs;     ///< one per address given, in order
};

/// Finds the barrier arrays that Addresses (closed forms, nullptr for an operand without a
/// value) name and resolves each address to a slot.
/// MaxIterations bounds each loop's iteration numbers while offsets are enumerated.
BarrierIdentity identifyBarriers(const ptx::Module &M, const ptx::Function *F, ExprContext &Ctx,
                                 const LaunchShape &Launch,
                                 llvm::ArrayRef<const Expr *> Addresses,
                                 llvm::ArrayRef<uint64_t> MaxIterations = {});

/// A shared-memory access for buffer identity.
struct BufferAccess {
  const Expr *Address = nullptr;
  /// An async copy's end in shared memory: such accesses define the buffers; the others
  /// (MMA descriptors, generic loads and stores) are placed in them.
  bool Defines = false;
  /// Copies of one family (the same direction and tensor map) may share a buffer; copies of
  /// different families never do.
  unsigned Family = 0;
  /// The threads of a CTA that make the access, when known: a term of the address that
  /// depends on the thread (each consumer warpgroup reads its own half of a tile) is placed
  /// by the values it takes on these threads. Empty when unknown.
  llvm::BitVector Threads;
};

struct BufferIdentity {
  std::vector<Buffer> Buffers; ///< Name left empty for the builder
  std::vector<BufferRef> Refs; ///< one per access given, in order
};

/// A loop's trip count as buffer placement reads it: Iterations (a closed form; nullptr
/// where the loop is not counted), exact where each of Conditions holds.
struct LoopTrip {
  const Expr *Iterations = nullptr;
  llvm::SmallVector<const Expr *, 2> Conditions;
};

/// Trips (per LoopId, may be empty) bound the iterations of a thread's own loops: an access
/// inside one whose count reads only %tid.x (a thread's loop over its words of a stage) is
/// placed by the bytes each thread reaches in the iterations it runs.
BufferIdentity identifyBuffers(const ptx::Module &M, const ptx::Function *F, ExprContext &Ctx,
                               const LaunchShape &Launch,
                               llvm::ArrayRef<BufferAccess> Accesses,
                               llvm::ArrayRef<uint64_t> MaxIterations = {},
                               llvm::ArrayRef<LoopTrip> Trips = {});

} // namespace analyzer
} // namespace wsv
