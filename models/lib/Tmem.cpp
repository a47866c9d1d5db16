//===- Tmem.cpp - reference model of tensor-memory allocation ------------------------===//
#include "wsv/models/Tmem.h"

namespace wsv {
namespace models {

const char *toString(TmemResult R) {
  switch (R) {
  case TmemResult::Ok:
    return "ok";
  case TmemResult::Blocked:
    return "not enough free tensor-memory columns";
  case TmemResult::BadColumnCount:
    return "column count is not a power of two in [32, 512]";
  case TmemResult::NotAllocated:
    return "dealloc of columns that are not allocated";
  case TmemResult::PermitRelinquished:
    return "alloc after relinquish_alloc_permit";
  }
  return "unknown";
}

bool TmemAllocator::validColumnCount(uint32_t N) {
  return N >= 32 && N <= Columns && (N & (N - 1)) == 0;
}

TmemResult TmemAllocator::alloc(uint32_t NumColumns, uint32_t &Column) {
  if (!validColumnCount(NumColumns))
    return TmemResult::BadColumnCount;
  if (Relinquished)
    return TmemResult::PermitRelinquished;
  for (uint32_t Start = 0; Start + NumColumns <= Columns; Start += NumColumns) {
    bool Free = true;
    for (const Range &R : Allocated)
      if (Start < R.Column + R.NumColumns && R.Column < Start + NumColumns)
        Free = false;
    if (Free) {
      Allocated.push_back({Start, NumColumns});
      Column = Start;
      return TmemResult::Ok;
    }
  }
  return TmemResult::Blocked;
}

TmemResult TmemAllocator::dealloc(uint32_t Column, uint32_t NumColumns) {
  if (!validColumnCount(NumColumns))
    return TmemResult::BadColumnCount;
  for (auto It = Allocated.begin(); It != Allocated.end(); ++It)
    if (It->Column == Column && It->NumColumns == NumColumns) {
      Allocated.erase(It);
      return TmemResult::Ok;
    }
  return TmemResult::NotAllocated;
}

uint32_t TmemAllocator::columnsInUse() const {
  uint32_t N = 0;
  for (const Range &R : Allocated)
    N += R.NumColumns;
  return N;
}

} // namespace models
} // namespace wsv
