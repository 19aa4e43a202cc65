// PackedKeys: strings in one buffer with where each ends, instead of a std::string each (a heap
// block and 32 bytes): what a reader keeps of a shard's sample keys, issue 39.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardpack {

class PackedKeys {
 public:
  void Reserve(size_t keys) { ends_.reserve(keys); }
  size_t size() const { return ends_.size(); }
  void Add(std::string_view key) {
    bytes_ += key;
    ends_.push_back(uint32_t(bytes_.size()));
  }
  // Key `i` (< the number added), valid while this object lives.
  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  uint64_t memory_bytes() const { return bytes_.capacity() + ends_.capacity() * sizeof(uint32_t); }

 private:
  std::string bytes_;
  std::vector<uint32_t> ends_;  // key i is bytes_[ends_[i - 1], ends_[i])
};

}  // namespace shardpack
