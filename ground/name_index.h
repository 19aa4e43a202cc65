// NameIndex: finds a number by a name that is kept elsewhere. A remote dataset of 100,000 shards
// has 300,000 files, found by name when a reader opens one; their names and checksums are in the
// reader's ShardTable already. Holding them again (a std::map node and string each, a few hundred
// bytes; or the names packed, about 50) would cost more than the manifest. Here a name costs an
// 8-byte entry (32 bits of its hash, a 32-bit number) of a table sorted by the hash, and the caller
// says whether a number's name is the one asked for: a hash that matches is never taken for the
// name (at 300,000 names about ten pairs share 32 bits of hash).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ground/checksum.h"

namespace shardpack {

class NameIndex {
 public:
  void Reserve(size_t names) { entries_.reserve(names); }
  // Adds `name` for `number` (several names may share a number). Seal() before Find.
  void Add(std::string_view name, uint32_t number) { entries_.push_back({Hash(name), number}); }
  void Seal() {
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.hash < b.hash; });
    entries_.shrink_to_fit();
  }
  // The first number, in the order added, whose is_named(number) is true, among those added with
  // a name of the same hash: is_named compares the name asked for with that number's.
  template <typename IsNamed>
  bool Find(std::string_view name, const IsNamed& is_named, uint32_t* number) const {
    const uint32_t hash = Hash(name);
    auto it =
        std::lower_bound(entries_.begin(), entries_.end(), hash, [](const Entry& e, uint32_t h) { return e.hash < h; });
    for (; it != entries_.end() && it->hash == hash; ++it) {
      if (is_named(it->number)) {
        *number = it->number;
        return true;
      }
    }
    return false;
  }
  size_t size() const { return entries_.size(); }
  uint64_t memory_bytes() const { return entries_.capacity() * sizeof(Entry); }

  static uint32_t Hash(std::string_view name) { return uint32_t(Xxh64(name) >> 32); }

 private:
  struct Entry {
    uint32_t hash;
    uint32_t number;
  };
  std::vector<Entry> entries_;
};

}  // namespace shardpack
