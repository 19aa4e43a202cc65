#include "storage/shared_cache_space.h"

#include <limits>

namespace shardpack {

SharedCacheSpace::SharedCacheSpace(Env* env, std::string dir, std::vector<std::string> paths,
                                   std::vector<uint64_t> sizes, uint64_t limit, CacheModes modes)
    : env_(env),
      dir_(std::move(dir)),
      paths_(std::move(paths)),
      sizes_(std::move(sizes)),
      limit_(limit),
      modes_(modes) {}

Status SharedCacheSpace::Reserve(size_t shard, bool force, const std::vector<uint64_t>& next_use,
                                 std::unique_ptr<FileLock>* fetch_lock, Room* room, uint32_t* evicted_count,
                                 uint64_t* used_bytes) {
  *evicted_count = 0;
  *used_bytes = 0;
  std::unique_ptr<FileLock> space;
  SHARDPACK_RETURN_IF_ERROR(env_->LockFile(JoinPath(dir_, "space.lock"), &space, modes_.file()));
  FileStat st;
  if (env_->StatPath(paths_[shard], &st).ok()) {
    *room = Room::kFetchedElsewhere;  // there (FetchIntoCache checks it), or another name planted
    return Status::OK();
  }
  uint64_t used = 0;
  SHARDPACK_RETURN_IF_ERROR(Used(&used));
  while (used + sizes_[shard] > limit_) {
    bool evicted = false;
    // A prefetch takes room only from shards nobody wants soon; a shard a reader waits for may take
    // it from wanted ones too (else a limit below the prefetch windows would thrash).
    SHARDPACK_RETURN_IF_ERROR(EvictOne(shard, next_use, /*wanted_too=*/force, &evicted));
    if (!evicted) break;
    ++*evicted_count;
    SHARDPACK_RETURN_IF_ERROR(Used(&used));
  }
  *used_bytes = used;
  if (used + sizes_[shard] > limit_ && !force) {
    *room = Room::kFull;
    return Status::OK();
  }
  bool acquired = false;
  SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[shard] + ".lock", false, fetch_lock, &acquired, modes_.file()));
  *room = acquired ? Room::kTaken : Room::kFetchedElsewhere;
  *used_bytes = used + (acquired ? sizes_[shard] : 0);
  return Status::OK();
}

Status SharedCacheSpace::Pin(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(paths_[shard] + ".pin", true, lock, held, modes_.file());
}

Status SharedCacheSpace::Want(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(paths_[shard] + ".want", true, lock, held, modes_.file());
}

Status SharedCacheSpace::Used(uint64_t* bytes) {
  *bytes = 0;
  for (size_t i = 0; i < paths_.size(); ++i) {
    FileStat st;
    if (env_->StatPath(paths_[i], &st).ok()) {
      *bytes += st.size;  // a partial or planted file takes what it takes
      continue;
    }
    // Downloading elsewhere: its fetch lock is held (a moment's hold here delays nobody for long).
    std::unique_ptr<FileLock> probe;
    bool free = false;
    SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[i] + ".lock", false, &probe, &free, modes_.file()));
    if (!free) *bytes += sizes_[i];
  }
  return Status::OK();
}

Status SharedCacheSpace::TakeForEviction(size_t shard, std::vector<std::unique_ptr<FileLock>>* locks, bool* taken) {
  // Its fetch lock too: a shard just published is checked and recorded under it, and must not go
  // before that is done.
  locks->clear();
  for (const char* suffix : {".pin", ".lock"}) {
    locks->emplace_back();
    SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[shard] + suffix, false, &locks->back(), taken, modes_.file()));
    if (!*taken) return Status::OK();
  }
  return Status::OK();
}

Status SharedCacheSpace::EvictOne(size_t keep, const std::vector<uint64_t>& next_use, bool wanted_too, bool* evicted) {
  *evicted = false;
  // The candidate: not pinned; not wanted before wanted; then the one this process needs latest;
  // then the oldest (modified longest ago).
  const auto next = [&](size_t i) { return i < next_use.size() ? next_use[i] : std::numeric_limits<uint64_t>::max(); };
  size_t victim = paths_.size();
  bool victim_wanted = true;
  int64_t victim_mtime = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < paths_.size(); ++i) {
    FileStat st;
    if (i == keep || !env_->StatPath(paths_[i], &st).ok()) continue;
    std::vector<std::unique_ptr<FileLock>> pin;
    std::unique_ptr<FileLock> want;
    bool unpinned = false, unwanted = false;
    SHARDPACK_RETURN_IF_ERROR(TakeForEviction(i, &pin, &unpinned));
    if (!unpinned) continue;
    SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[i] + ".want", false, &want, &unwanted, modes_.file()));
    const bool wanted = !unwanted;
    if (wanted && !wanted_too) continue;
    const bool better = victim == paths_.size() || (victim_wanted && !wanted) ||
                        (victim_wanted == wanted &&
                         (next(i) > next(victim) || (next(i) == next(victim) && st.mtime_ns < victim_mtime)));
    if (better) {
      victim = i, victim_wanted = wanted, victim_mtime = st.mtime_ns;
    }
  }
  if (victim == paths_.size()) return Status::OK();
  // Pinned since the scan: not this one (the next call looks again).
  std::vector<std::unique_ptr<FileLock>> held;
  bool unpinned = false;
  SHARDPACK_RETURN_IF_ERROR(TakeForEviction(victim, &held, &unpinned));
  if (!unpinned) {
    *evicted = true;  // something changed: count again
    return Status::OK();
  }
  RemoveCachedCopy(env_, paths_[victim]);
  *evicted = true;
  return Status::OK();
}

}  // namespace shardpack
