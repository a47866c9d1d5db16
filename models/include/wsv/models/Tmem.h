//===- Tmem.h - reference model of tensor-memory allocation --------------------------===//
//
// tcgen05.alloc / tcgen05.dealloc / tcgen05.relinquish_alloc_permit (PTX ISA, "Tensor Memory
// Allocation and Management Instructions"). Each SM has 512 columns of tensor memory. An
// allocation takes a power of two of columns between 32 and 512 and blocks until that many
// columns are free; dealloc must return exactly an allocated range; after a CTA relinquishes
// its permit it may not allocate again. Allocations are modelled as ranges aligned to their
// size, so 512 columns hold at most one 512-column allocation, two of 256, and so on.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace wsv {
namespace models {

enum class TmemResult {
  Ok,
  Blocked,          ///< alloc: not enough free columns now; the warp waits
  BadColumnCount,   ///< not a power of two in [32, 512]
  NotAllocated,     ///< dealloc of a range that is not an allocation
  PermitRelinquished, ///< alloc after relinquish_alloc_permit
};

const char *toString(TmemResult R);

class TmemAllocator {
public:
  static constexpr uint32_t Columns = 512;

  /// On Ok, Column receives the first column of the allocation.
  TmemResult alloc(uint32_t NumColumns, uint32_t &Column);
  TmemResult dealloc(uint32_t Column, uint32_t NumColumns);
  void relinquishPermit() { Relinquished = true; }

  uint32_t columnsInUse() const;
  static bool validColumnCount(uint32_t NumColumns);

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    Out.put(Relinquished);
    Out.put(Allocated.size());
    for (const Range &A : Allocated)
      Out.put(uint64_t(A.Column) << 32 | A.NumColumns);
  }
  template <typename R> void load(R &In) {
    Relinquished = In.get() != 0;
    Allocated.resize(In.get());
    for (Range &A : Allocated) {
      uint64_t V = In.get();
      A = {static_cast<uint32_t>(V >> 32), static_cast<uint32_t>(V)};
    }
  }

private:
  struct Range {
    uint32_t Column, NumColumns;
  };
  std::vector<Range> Allocated;
  bool Relinquished = false;
};

} // namespace models
} // namespace wsv
