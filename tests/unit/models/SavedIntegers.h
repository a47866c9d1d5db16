// What the models' save() writes and load() reads, as a plain list of integers (the
// explorer packs the same calls into variable-length bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wsv {
namespace models {
namespace test {

struct SavedIntegers {
  std::vector<uint64_t> Values;
  size_t Next = 0;
  void put(uint64_t V) { Values.push_back(V); }
  void putSigned(int64_t V) { Values.push_back(static_cast<uint64_t>(V)); }
  uint64_t get() { return Values.at(Next++); }
  int64_t getSigned() { return static_cast<int64_t>(Values.at(Next++)); }
};

} // namespace test
} // namespace models
} // namespace wsv
