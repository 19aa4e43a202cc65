#include "storage/shared_cache_space.h"

#include <algorithm>
#include <limits>

namespace shardpack {

SharedCacheSpace::SharedCacheSpace(Env* env, std::string dir, std::vector<std::string> paths,
                                   std::vector<uint64_t> sizes, uint64_t limit, CacheModes modes)
    : env_(env),
      dir_(std::move(dir)),
      paths_(std::move(paths)),
      sizes_(std::move(sizes)),
      limit_(limit),
      modes_(modes) {
  for (size_t i = 0; i < paths_.size(); ++i) {
    const std::string name = NameInFolder(i);
    flat_ = flat_ && name.find('/') == std::string::npos;
    by_name_.emplace(name, i);
  }
}

std::string SharedCacheSpace::NameInFolder(size_t shard) const {
  const std::string& path = paths_[shard];
  const bool inside = path.size() > dir_.size() && path.compare(0, dir_.size(), dir_) == 0 && path[dir_.size()] == '/';
  return inside ? path.substr(dir_.size() + 1) : path;
}

namespace {

constexpr char kLedgerName[] = "space.ledger";
constexpr uint64_t kMaxLedgerBytes = uint64_t(64) << 20;

}  // namespace

Status SharedCacheSpace::ReadLedger(std::vector<size_t>* shards, bool* changed) {
  shards->clear();
  *changed = false;
  std::vector<bool> seen(paths_.size(), false);
  const auto add = [&](const std::string& name) {
    const auto it = by_name_.find(name);
    if (it != by_name_.end() && !seen[it->second]) seen[it->second] = true, shards->push_back(it->second);
  };
  std::string text;
  if (env_->ReadFile(JoinPath(dir_, kLedgerName), kMaxLedgerBytes, &text).ok()) {
    // Names this dataset does not have are ignored: a ledger is a hint about this folder's files,
    // each checked (Verify) before it counts for an eviction, never a path to follow.
    for (size_t begin = 0, end; begin < text.size(); begin = end + 1) {
      end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      add(text.substr(begin, end - begin));
    }
    return Status::OK();
  }
  // No ledger (a folder from before it) or none readable: rebuilt from one read of the folder (a
  // shard's file, or its fetch lock for a download under way), or, when shards lie in sub-folders,
  // from every shard; checked at once.
  std::vector<DirEntry> entries;
  if (flat_ && env_->ListDir(dir_, &entries).ok()) {
    for (const DirEntry& e : entries) {
      const bool lock = e.name.size() > 5 && e.name.compare(e.name.size() - 5, 5, ".lock") == 0;
      add(lock ? e.name.substr(0, e.name.size() - 5) : e.name);
    }
  } else {
    for (size_t i = 0; i < paths_.size(); ++i) shards->push_back(i);
  }
  *changed = true;
  return Verify(shards, changed);
}

Status SharedCacheSpace::Verify(std::vector<size_t>* shards, bool* changed) {
  std::vector<size_t> kept;
  for (const size_t i : *shards) {
    FileStat st;
    bool taken = env_->StatPath(paths_[i], &st).ok();
    if (!taken) {
      // Downloading elsewhere: its fetch lock is held (a moment's hold here delays nobody for long).
      std::unique_ptr<FileLock> probe;
      bool free = false;
      SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[i] + ".lock", false, &probe, &free, modes_.file()));
      taken = !free;
    }
    if (taken) kept.push_back(i);
  }
  *changed = *changed || kept.size() != shards->size();
  *shards = std::move(kept);
  return Status::OK();
}

uint64_t SharedCacheSpace::Counted(const std::vector<size_t>& shards) const {
  uint64_t bytes = 0;
  for (const size_t i : shards) bytes += sizes_[i];
  return bytes;
}

uint64_t SharedCacheSpace::Used(const std::vector<size_t>& shards) {
  uint64_t bytes = 0;
  for (const size_t i : shards) {
    FileStat st;
    // A partial or planted file takes what it takes; a download under way, the shard's size.
    bytes += env_->StatPath(paths_[i], &st).ok() ? st.size : sizes_[i];
  }
  return bytes;
}

void SharedCacheSpace::WriteLedger(const std::vector<size_t>& shards) {
  std::string text;
  for (const size_t i : shards) text += NameInFolder(i) + "\n";
  const std::string path = JoinPath(dir_, kLedgerName);
  // Not synced: a machine crash that loses it loses the cache's downloads too, or leaves a ledger
  // that the next decision rebuilds.
  if (!WriteFileAtomically(env_, path, text, /*sync=*/false).ok()) (void)env_->RemoveFile(path);
}

Status SharedCacheSpace::Reserve(size_t shard, bool force, const std::vector<uint64_t>& next_use,
                                 std::unique_ptr<FileLock>* fetch_lock, Room* room, uint32_t* evicted_count,
                                 uint64_t* used_bytes) {
  *evicted_count = 0;
  *used_bytes = 0;
  std::unique_ptr<FileLock> space;
  SHARDPACK_RETURN_IF_ERROR(env_->LockFile(JoinPath(dir_, "space.lock"), &space, modes_.file()));
  std::vector<size_t> ledger;
  bool changed = false;
  SHARDPACK_RETURN_IF_ERROR(ReadLedger(&ledger, &changed));
  FileStat st;
  if (env_->StatPath(paths_[shard], &st).ok()) {
    *room = Room::kFetchedElsewhere;  // there (FetchIntoCache checks it), or another name planted
    if (changed) WriteLedger(ledger);
    return Status::OK();
  }
  // Under the limit by the ledger's count, nothing needs a look: the ledger names every shard
  // that takes room (and maybe some that no longer do), so the folder holds no more than it counts.
  // Over it, its entries are checked (a stat each) before anything is evicted.
  uint64_t used = Counted(ledger);
  if (used + sizes_[shard] > limit_) {
    SHARDPACK_RETURN_IF_ERROR(Verify(&ledger, &changed));
    used = Used(ledger);
  }
  while (used + sizes_[shard] > limit_) {
    bool evicted = false;
    uint64_t freed = 0;
    // A prefetch takes room only from shards nobody wants soon; a shard a reader waits for may take
    // it from wanted ones too (else a limit below the prefetch windows would thrash).
    SHARDPACK_RETURN_IF_ERROR(EvictOne(shard, next_use, /*wanted_too=*/force, &ledger, &evicted, &freed));
    if (!evicted) break;
    ++*evicted_count;
    changed = true;
    used = freed > 0 ? used - std::min(used, freed) : Used(ledger);  // 0: something changed, count again
  }
  *used_bytes = used;
  if (used + sizes_[shard] > limit_ && !force) {
    *room = Room::kFull;
    if (changed) WriteLedger(ledger);
    return Status::OK();
  }
  bool acquired = false;
  SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(paths_[shard] + ".lock", false, fetch_lock, &acquired, modes_.file()));
  *room = acquired ? Room::kTaken : Room::kFetchedElsewhere;
  *used_bytes = used + (acquired ? sizes_[shard] : 0);
  // Named before the download starts (its fetch lock is held from now on): no file appears here
  // that the ledger does not name. A shard another process is fetching is in the ledger already.
  if (acquired && std::find(ledger.begin(), ledger.end(), shard) == ledger.end())
    ledger.push_back(shard), changed = true;
  if (changed) WriteLedger(ledger);
  return Status::OK();
}

Status SharedCacheSpace::Pin(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(paths_[shard] + ".pin", true, lock, held, modes_.file());
}

Status SharedCacheSpace::Want(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(paths_[shard] + ".want", true, lock, held, modes_.file());
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

Status SharedCacheSpace::EvictOne(size_t keep, const std::vector<uint64_t>& next_use, bool wanted_too,
                                  std::vector<size_t>* shards, bool* evicted, uint64_t* freed) {
  *evicted = false;
  *freed = 0;
  // The candidate: not pinned; not wanted before wanted; then the one this process needs latest;
  // then the oldest (modified longest ago).
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const auto next = [&](size_t i) { return i < next_use.size() ? next_use[i] : kNever; };
  // Among wanted shards, one this process is done with is one another rank of the node reads now
  // (the ranks go through the same order of shards, a little apart): it goes last. Else the one
  // needed latest goes first (Belady's rule, by this process's plan, which the others share).
  const auto key = [&](size_t i, bool wanted) { return wanted && next(i) == kNever ? 0 : next(i); };
  size_t victim = paths_.size();
  bool victim_wanted = true;
  int64_t victim_mtime = std::numeric_limits<int64_t>::max();
  uint64_t victim_size = 0;
  for (const size_t i : *shards) {
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
    const bool better =
        victim == paths_.size() || (victim_wanted && !wanted) ||
        (victim_wanted == wanted && (key(i, wanted) > key(victim, victim_wanted) ||
                                     (key(i, wanted) == key(victim, victim_wanted) && st.mtime_ns < victim_mtime)));
    if (better) {
      victim = i, victim_wanted = wanted, victim_mtime = st.mtime_ns, victim_size = st.size;
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
  shards->erase(std::find(shards->begin(), shards->end(), victim));
  *evicted = true;
  *freed = victim_size;
  return Status::OK();
}

}  // namespace shardpack
