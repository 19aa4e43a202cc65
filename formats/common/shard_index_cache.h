// ShardIndexCache: what a reader needs of each shard (its open file, its samples' locations), read
// when the shard is first asked for, not when the dataset opens, and kept within a memory bound,
// so that opening a dataset of 100,000 shards reads its manifest and nothing per sample (issue 39).
//
// A shard's index is loaded outside the lock, by one thread at a time (others asking for the same
// shard wait for it), handed out as a shared_ptr so that a reader still holding one is safe when
// another thread evicts it, and the least recently used shards are dropped once the indexes kept
// exceed `budget_bytes` or kMaxIndexedShards (each an open file). The shard just loaded is always
// kept, whatever the bound.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// The default bound of a reader's shard indexes (RemoteOptions::index_memory, $SHARDPACK_INDEX_MEMORY
// changes it; docs/performance.md, "Scale").
inline constexpr uint64_t kDefaultIndexMemory = uint64_t(256) << 20;
// At most this many shards' indexes (and open files) kept at once.
inline constexpr size_t kMaxIndexedShards = 2048;

// The bound the options give: their index_memory, or the default.
inline uint64_t IndexMemory(const RemoteOptions& options) {
  return options.index_memory > 0 ? options.index_memory : kDefaultIndexMemory;
}

template <typename Index>  // Index has `uint64_t memory_bytes() const`
class ShardIndexCache {
 public:
  using Load = std::function<Status(size_t shard, std::unique_ptr<Index>* index)>;

  ShardIndexCache(size_t shards, uint64_t budget_bytes, Load load)
      : budget_(budget_bytes), load_(std::move(load)), slots_(shards) {}

  // Shard `shard`'s index (< the shard count), loaded now if it is not kept. One thread loads a
  // shard at a time: others asking for it meanwhile wait for that load rather than read and
  // download its files again (and after a failed one, try themselves).
  Status Get(size_t shard, std::shared_ptr<const Index>* index) const {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& slot = slots_[shard];
    while (slot.index == nullptr && slot.loading) loaded_.wait(lock);
    if (slot.index != nullptr) {
      recent_.splice(recent_.begin(), recent_, slot.place);
      *index = slot.index;
      return Status::OK();
    }
    slot.loading = true;
    lock.unlock();
    std::unique_ptr<Index> loaded;
    Status s = load_(shard, &loaded);
    lock.lock();
    slot.loading = false;
    loaded_.notify_all();
    if (!s.ok()) return s;
    *index = Keep(shard, std::move(loaded));
    return Status::OK();
  }

  // Keeps `index` as shard `shard`'s (one its opener made anyway), as if Get had loaded it.
  void Put(size_t shard, std::unique_ptr<Index> index) {
    std::lock_guard<std::mutex> lock(mutex_);
    Keep(shard, std::move(index));
  }

  // Shards loaded so far (a shard loaded again after eviction counts again), and kept now.
  uint64_t loads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return loads_;
  }
  size_t kept() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return recent_.size();
  }

 private:
  struct Slot {
    std::shared_ptr<const Index> index;
    bool loading = false;  // a thread is loading it (Get)
    uint64_t bytes = 0;
    std::list<size_t>::iterator place;  // in recent_
  };

  // Under the lock: `loaded` kept as the shard's index unless another thread kept one first; the
  // index kept.
  std::shared_ptr<const Index> Keep(size_t shard, std::unique_ptr<Index> loaded) const {
    Slot& slot = slots_[shard];
    if (slot.index == nullptr) {
      slot.bytes = loaded->memory_bytes();
      slot.index = std::move(loaded);
      recent_.push_front(shard);
      slot.place = recent_.begin();
      used_ += slot.bytes;
      ++loads_;
      Evict(shard);
    }
    return slot.index;
  }

  // Drops the least recently used shards, never `keep`, until the bounds hold.
  void Evict(size_t keep) const {
    while ((used_ > budget_ || recent_.size() > kMaxIndexedShards) && recent_.size() > 1) {
      const size_t oldest = recent_.back();
      if (oldest == keep) break;
      recent_.pop_back();
      used_ -= slots_[oldest].bytes;
      slots_[oldest].index.reset();
    }
  }

  const uint64_t budget_;
  const Load load_;
  mutable std::mutex mutex_;
  mutable std::condition_variable loaded_;  // a load ended
  mutable std::vector<Slot> slots_;
  mutable std::list<size_t> recent_;  // kept shards, most recently used first
  mutable uint64_t used_ = 0;
  mutable uint64_t loads_ = 0;
};

}  // namespace shardpack
