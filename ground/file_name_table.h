// FileNameTable: names (of a dataset's files, relative to its folder), each with a value, found by
// name. Why not a std::map<std::string, ...>: a remote dataset of 100,000 shards has 300,000 files,
// and a map node with its string costs a few hundred bytes each; here a name costs its bytes, its
// end and a 16-byte entry of a table sorted by the name's hash (about 50 bytes), for the same
// lookup in O(log n), with the name compared so that a hash collision is never a wrong answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ground/checksum.h"
#include "ground/packed_keys.h"

namespace shardpack {

class FileNameTable {
 public:
  void Reserve(size_t names) {
    names_.Reserve(names);
    entries_.reserve(names);
  }
  // Adds `name` (names added twice: the first is found). Seal() before Find.
  void Add(std::string_view name, uint64_t value) {
    entries_.push_back({Xxh64(name), uint32_t(names_.size()), value});
    names_.Add(name);
  }
  void Seal() {
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.hash < b.hash; });
    entries_.shrink_to_fit();
  }
  bool Find(std::string_view name, uint64_t* value) const {
    const uint64_t hash = Xxh64(name);
    auto it =
        std::lower_bound(entries_.begin(), entries_.end(), hash, [](const Entry& e, uint64_t h) { return e.hash < h; });
    for (; it != entries_.end() && it->hash == hash; ++it) {
      if (names_[it->name] == name) {
        *value = it->value;
        return true;
      }
    }
    return false;
  }
  // The name added as number i (in the order of Add).
  std::string_view name(size_t i) const { return names_[i]; }
  size_t size() const { return names_.size(); }

 private:
  struct Entry {
    uint64_t hash;
    uint32_t name;  // in names_
    uint64_t value;
  };
  PackedKeys names_;
  std::vector<Entry> entries_;
};

}  // namespace shardpack
