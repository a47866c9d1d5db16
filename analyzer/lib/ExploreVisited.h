//===- ExploreVisited.h - the keys of the states a search has visited -------------===//
//
// A search keeps the key of every state it reached (tens of millions on a persistent
// kernel's periodic system), so each key is stored once, back to back in an arena, and found
// again by open addressing over 32-bit ids: about a third of the memory of a hash map of
// strings, and no allocation per state. Private to analyzer/lib.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {
namespace exploration {

class VisitedSet {
public:
  /// Key's id (ids count up from 0 in insertion order) and whether it is new.
  std::pair<uint32_t, bool> insert(llvm::StringRef Key) {
    if (2 * (Keys.size() + 1) > Table.size())
      grow();
    uint64_t Hash = llvm::xxh3_64bits(Key);
    for (size_t Slot = Hash & (Table.size() - 1);; Slot = (Slot + 1) & (Table.size() - 1)) {
      uint32_t Id = Table[Slot];
      if (Id == Empty) {
        char *Data = static_cast<char *>(Arena.Allocate(Key.size(), 1));
        std::memcpy(Data, Key.data(), Key.size());
        Id = static_cast<uint32_t>(Keys.size());
        Keys.push_back({Data, static_cast<uint32_t>(Key.size()), static_cast<uint32_t>(Hash)});
        Table[Slot] = Id;
        return {Id, true};
      }
      const Entry &E = Keys[Id];
      if (E.Hash == static_cast<uint32_t>(Hash) && llvm::StringRef(E.Data, E.Size) == Key)
        return {Id, false};
    }
  }
  size_t size() const { return Keys.size(); }

private:
  static constexpr uint32_t Empty = UINT32_MAX;
  struct Entry {
    const char *Data;
    uint32_t Size;
    uint32_t Hash; ///< the low half of the key's hash: most mismatches end here
  };
  void grow() {
    std::vector<uint32_t> Bigger(Table.empty() ? 1024 : 2 * Table.size(), Empty);
    for (uint32_t Id = 0; Id < Keys.size(); ++Id) {
      // The low bits index the table: the stored half of the hash is enough to place a key.
      size_t Slot = Keys[Id].Hash & (Bigger.size() - 1);
      while (Bigger[Slot] != Empty)
        Slot = (Slot + 1) & (Bigger.size() - 1);
      Bigger[Slot] = Id;
    }
    Table = std::move(Bigger);
  }

  llvm::BumpPtrAllocator Arena;
  std::vector<Entry> Keys;
  std::vector<uint32_t> Table; ///< ids; a power of two long, at most half full
};

} // namespace exploration
} // namespace analyzer
} // namespace wsv
