// ShardLocator: which shard holds global sample i, and at which position inside it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shardpack/shard_table.h"

namespace shardpack {

class ShardLocator {
 public:
  explicit ShardLocator(const ShardTable& shards) {
    uint64_t total = 0;
    first_.reserve(shards.size());
    for (const uint64_t n : shards.sample_counts()) {
      first_.push_back(total);
      total += n;
    }
  }
  // Precondition: index < the sum of the shards' samples.
  void Locate(uint64_t index, size_t* shard, uint64_t* local) const {
    *shard = static_cast<size_t>(std::upper_bound(first_.begin(), first_.end(), index) - first_.begin()) - 1;
    *local = index - first_[*shard];
  }

 private:
  std::vector<uint64_t> first_;  // global index of each shard's first sample
};

}  // namespace shardpack
