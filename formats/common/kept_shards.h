// KeptShards: what a reader in place keeps of its few most recently used shards (an MDS shard
// decompressed, a Parquet row group read, a Parquet file opened), least recently used dropped.
//
// Get hands out an entry made empty the first time, and the reader fills it under the entry's own
// lock: a second reader of the same shard waits for the first rather than loading it again, and
// readers of other shards do not wait at all. An entry dropped while a reader still uses it lives
// on in that reader's reference.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace shardpack {

template <typename Entry>
class KeptShards {
 public:
  explicit KeptShards(size_t capacity) : capacity_(capacity) {}

  // The entry of `shard`, now the most recently used.
  std::shared_ptr<Entry> Get(size_t shard) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first != shard) continue;
      kept_.splice(kept_.begin(), kept_, it);
      return it->second;
    }
    auto entry = std::make_shared<Entry>();
    kept_.emplace_front(shard, entry);
    if (kept_.size() > capacity_) kept_.pop_back();
    return entry;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::list<std::pair<size_t, std::shared_ptr<Entry>>> kept_;  // most recently used first
};

}  // namespace shardpack
