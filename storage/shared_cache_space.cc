#include "storage/shared_cache_space.h"

#include <algorithm>
#include <limits>

namespace shardpack {

SharedCacheSpace::SharedCacheSpace(Env* env, std::string dir, std::shared_ptr<const RemoteShardList> shards,
                                   uint64_t limit, CacheModes modes)
    : env_(env), dir_(std::move(dir)), shards_(std::move(shards)), limit_(limit), modes_(modes) {
  by_name_.Reserve(shards_->size());
  for (size_t i = 0; i < shards_->size(); ++i) {
    const std::string name = NameInFolder(i);
    flat_ = flat_ && name.find('/') == std::string::npos;
    by_name_.Add(name, uint32_t(i));
  }
  by_name_.Seal();
}

std::string SharedCacheSpace::NameInFolder(size_t shard) const {
  const std::string path = shards_->path(shard);
  const bool inside = path.size() > dir_.size() && path.compare(0, dir_.size(), dir_) == 0 && path[dir_.size()] == '/';
  return inside ? path.substr(dir_.size() + 1) : path;
}

bool SharedCacheSpace::ShardNamed(std::string_view name, size_t* shard) const {
  const auto is_named = [&](uint32_t i) { return NameInFolder(i) == name; };
  uint32_t found = 0;
  if (!by_name_.Find(name, is_named, &found)) return false;
  *shard = size_t(found);
  return true;
}

namespace {

constexpr char kLedgerName[] = "space.ledger";
constexpr uint64_t kMaxLedgerBytes = uint64_t(64) << 20;
// Version 2: this line, then a line a change, "+name" (the shard takes room) or "-name" (no longer).
// Version 1 (no such line, written before 2026-12-03): a name a line, each taking room; rewritten
// as version 2 by the first decision that changes it.
constexpr std::string_view kLedgerHeader = "#shardpack-space-ledger-v2\n";

}  // namespace

std::vector<size_t> SharedCacheSpace::LedgerView::Live() {
  std::vector<size_t> live;
  for (const size_t i : order) {
    if (named[i]) live.push_back(i);
  }
  order = live;  // (drops the removed ones, which stay in `order` until now)
  return live;
}

void SharedCacheSpace::LedgerView::Apply(std::string_view line, const SharedCacheSpace& space) {
  ++lines;
  const bool add = !v2 || (!line.empty() && line[0] == '+');
  if (v2) {
    if (line.empty() || (line[0] != '+' && line[0] != '-')) return;
    line.remove_prefix(1);
  }
  size_t shard = 0;
  if (!space.ShardNamed(line, &shard)) return;  // a name this dataset does not have: ignored
  if (add && !named[shard]) order.push_back(shard);
  named[shard] = add;
}

Status SharedCacheSpace::OpenLedger(const std::string& path) {
  view_ = LedgerView();
  SHARDPACK_RETURN_IF_ERROR(env_->NewRandomAccessFile(path, &view_.reader));
  FileStat st;
  SHARDPACK_RETURN_IF_ERROR(view_.reader->Stat(&st));
  view_.device = st.device, view_.inode = st.inode;
  view_.named.assign(shards_->size(), false);
  // (No appender is not an error: each change then rewrites the ledger whole.)
  if (!env_->NewAppendableFile(path, &view_.appender).ok()) view_.appender.reset();
  return Status::OK();
}

Status SharedCacheSpace::ReadLedgerTail() {
  FileStat st;
  SHARDPACK_RETURN_IF_ERROR(view_.reader->Stat(&st));
  if (st.size > kMaxLedgerBytes || st.size < view_.offset) return Status::DataLoss("ledger");
  std::string tail(st.size - view_.offset, '\0');
  SHARDPACK_RETURN_IF_ERROR(view_.reader->Read(view_.offset, tail.size(), tail.data()));
  size_t begin = 0;
  if (view_.offset == 0 && std::string_view(tail).substr(0, kLedgerHeader.size()) == kLedgerHeader) {
    view_.v2 = true, begin = kLedgerHeader.size();
  }
  // Whole lines only (every writer ends each line before letting space.lock go).
  for (size_t end; (end = tail.find('\n', begin)) != std::string::npos; begin = end + 1) {
    view_.Apply(std::string_view(tail).substr(begin, end - begin), *this);
  }
  view_.offset += begin;
  return Status::OK();
}

Status SharedCacheSpace::ReadLedger(std::vector<size_t>* shards, bool* changed) {
  shards->clear();
  *changed = false;
  const std::string path = JoinPath(dir_, kLedgerName);
  FileStat st;
  if (env_->StatPath(path, &st).ok() && st.type == FileStat::Type::kFile) {
    // The file this process read last, appended to since: only the new lines are read. Another one
    // (rewritten, or rebuilt): read whole. (While the reader holds the old file open its inode
    // cannot be reused, so the same inode is the same file.)
    Status s = view_.reader != nullptr && st.device == view_.device && st.inode == view_.inode ? Status::OK()
                                                                                               : OpenLedger(path);
    if (s.ok()) s = ReadLedgerTail();
    if (s.ok()) {
      *shards = view_.Live();
      return Status::OK();
    }
    view_ = LedgerView();  // unreadable: rebuilt as below
  }
  // No ledger (a folder from before it) or none readable: rebuilt from one read of the folder (a
  // shard's file, or its fetch lock for a download under way), or, when shards lie in sub-folders,
  // from every shard; checked at once.
  std::vector<bool> seen(shards_->size(), false);
  const auto add = [&](const std::string& name) {
    size_t shard = 0;
    if (ShardNamed(name, &shard) && !seen[shard]) seen[shard] = true, shards->push_back(shard);
  };
  std::vector<DirEntry> entries;
  if (flat_ && env_->ListDir(dir_, &entries).ok()) {
    for (const DirEntry& e : entries) {
      const bool lock = e.name.size() > 5 && e.name.compare(e.name.size() - 5, 5, ".lock") == 0;
      add(lock ? e.name.substr(0, e.name.size() - 5) : e.name);
    }
  } else {
    for (size_t i = 0; i < shards_->size(); ++i) shards->push_back(i);
  }
  *changed = true;
  return Verify(shards, changed);
}

Status SharedCacheSpace::Verify(std::vector<size_t>* shards, bool* changed) {
  std::vector<size_t> kept;
  for (const size_t i : *shards) {
    FileStat st;
    bool taken = env_->StatPath(shards_->path(i), &st).ok();
    if (!taken) {
      // Downloading elsewhere: its fetch lock is held (a moment's hold here delays nobody for long).
      std::unique_ptr<FileLock> probe;
      bool free = false;
      SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(shards_->path(i) + ".lock", false, &probe, &free, modes_.file()));
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
  for (const size_t i : shards) bytes += shards_->bytes(i);
  return bytes;
}

uint64_t SharedCacheSpace::Used(const std::vector<size_t>& shards) {
  uint64_t bytes = 0;
  for (const size_t i : shards) {
    FileStat st;
    // A partial or planted file takes what it takes; a download under way, the shard's size.
    bytes += env_->StatPath(shards_->path(i), &st).ok() ? st.size : shards_->bytes(i);
  }
  return bytes;
}

void SharedCacheSpace::WriteLedger(const std::vector<size_t>& shards) {
  const std::string path = JoinPath(dir_, kLedgerName);
  // The changes since the ledger was read, appended (constant work a decision), while the file
  // holds no more than twice the lines it names (and a little): else it is written again whole.
  if (view_.reader != nullptr && view_.v2 && view_.appender != nullptr) {
    std::vector<bool> now(shards_->size(), false);
    std::string lines;
    uint64_t count = 0;
    for (const size_t i : shards) {
      now[i] = true;
      if (!view_.named[i]) lines += "+" + NameInFolder(i) + "\n", ++count;
    }
    for (const size_t i : view_.order) {
      if (view_.named[i] && !now[i]) lines += "-" + NameInFolder(i) + "\n", ++count;
    }
    if (view_.lines + count <= 2 * shards.size() + 256) {
      if (lines.empty() || view_.appender->Append(lines).ok()) {
        // What was appended is this process's view already: the next read starts after it.
        for (size_t begin = 0, end; (end = lines.find('\n', begin)) != std::string::npos; begin = end + 1) {
          view_.Apply(std::string_view(lines).substr(begin, end - begin), *this);
        }
        view_.offset += lines.size();
        return;
      }
    }
  }
  std::string text(kLedgerHeader);
  for (const size_t i : shards) text += "+" + NameInFolder(i) + "\n";
  view_ = LedgerView();  // the next decision reads the new file
  // Not synced: a machine crash that loses it loses the cache's downloads too, or leaves a ledger
  // that the next decision rebuilds.
  if (!WriteFileAtomically(env_, path, text, /*sync=*/false).ok()) (void)env_->RemoveFile(path);
}

Status SharedCacheSpace::LockSpace() {
  if (space_lock_ != nullptr && space_lock_->Relock().ok()) return Status::OK();
  space_lock_.reset();
  return env_->LockFile(JoinPath(dir_, "space.lock"), &space_lock_, modes_.file());
}

void SharedCacheSpace::UnlockSpace() {
  if (space_lock_ != nullptr && !space_lock_->Unlock().ok()) space_lock_.reset();  // closed: let go
}

Status SharedCacheSpace::Reserve(size_t shard, bool force, const ShardNextUse& next_use,
                                 std::unique_ptr<FileLock>* fetch_lock, Room* room, uint32_t* evicted_count,
                                 uint64_t* used_bytes) {
  *evicted_count = 0;
  *used_bytes = 0;
  // One decision at a time in this process (its threads share one open lock file, whose flock
  // does not stand between them), and in the folder (the flock).
  std::lock_guard<std::mutex> decide(decide_mu_);
  SHARDPACK_RETURN_IF_ERROR(LockSpace());
  struct LetGo {
    SharedCacheSpace* space;
    ~LetGo() { space->UnlockSpace(); }
  } let_go{this};
  std::vector<size_t> ledger;
  bool changed = false;
  SHARDPACK_RETURN_IF_ERROR(ReadLedger(&ledger, &changed));
  FileStat st;
  if (env_->StatPath(shards_->path(shard), &st).ok()) {
    *room = Room::kFetchedElsewhere;  // there (FetchIntoCache checks it), or another name planted
    if (changed) WriteLedger(ledger);
    return Status::OK();
  }
  // Under the limit by the ledger's count, nothing needs a look: the ledger names every shard
  // that takes room (and maybe some that no longer do), so the folder holds no more than it counts.
  // Over it, its entries are checked (a stat each) before anything is evicted.
  uint64_t used = Counted(ledger);
  if (used + shards_->bytes(shard) > limit_) {
    SHARDPACK_RETURN_IF_ERROR(Verify(&ledger, &changed));
    used = Used(ledger);
  }
  while (used + shards_->bytes(shard) > limit_) {
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
  if (used + shards_->bytes(shard) > limit_ && !force) {
    *room = Room::kFull;
    if (changed) WriteLedger(ledger);
    return Status::OK();
  }
  bool acquired = false;
  SHARDPACK_RETURN_IF_ERROR(
      env_->TryLockFile(shards_->path(shard) + ".lock", false, fetch_lock, &acquired, modes_.file()));
  *room = acquired ? Room::kTaken : Room::kFetchedElsewhere;
  *used_bytes = used + (acquired ? shards_->bytes(shard) : 0);
  // Named before the download starts (its fetch lock is held from now on): no file appears here
  // that the ledger does not name. A shard another process is fetching is in the ledger already.
  if (acquired && std::find(ledger.begin(), ledger.end(), shard) == ledger.end())
    ledger.push_back(shard), changed = true;
  if (changed) WriteLedger(ledger);
  return Status::OK();
}

Status SharedCacheSpace::Pin(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(shards_->path(shard) + ".pin", true, lock, held, modes_.file());
}

Status SharedCacheSpace::Want(size_t shard, std::unique_ptr<FileLock>* lock, bool* held) {
  return env_->TryLockFile(shards_->path(shard) + ".want", true, lock, held, modes_.file());
}

Status SharedCacheSpace::TakeForEviction(size_t shard, std::vector<std::unique_ptr<FileLock>>* locks, bool* taken) {
  // Its fetch lock too: a shard just published is checked and recorded under it, and must not go
  // before that is done.
  locks->clear();
  for (const char* suffix : {".pin", ".lock"}) {
    locks->emplace_back();
    SHARDPACK_RETURN_IF_ERROR(
        env_->TryLockFile(shards_->path(shard) + suffix, false, &locks->back(), taken, modes_.file()));
    if (!*taken) return Status::OK();
  }
  return Status::OK();
}

Status SharedCacheSpace::EvictOne(size_t keep, const ShardNextUse& next_use, bool wanted_too,
                                  std::vector<size_t>* shards, bool* evicted, uint64_t* freed) {
  *evicted = false;
  *freed = 0;
  // The candidate: not pinned; not wanted before wanted; then the one this process needs latest;
  // then the oldest (modified longest ago).
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const auto next = [&](size_t i) {
    const auto it = next_use.find(i);
    return it != next_use.end() ? it->second : kNever;
  };
  // Among wanted shards, one this process is done with is one another rank of the node reads now
  // (the ranks go through the same order of shards, a little apart): it goes last. Else the one
  // needed latest goes first (Belady's rule, by this process's plan, which the others share).
  const auto key = [&](size_t i, bool wanted) { return wanted && next(i) == kNever ? 0 : next(i); };
  size_t victim = shards_->size();
  bool victim_wanted = true;
  int64_t victim_mtime = std::numeric_limits<int64_t>::max();
  uint64_t victim_size = 0;
  for (const size_t i : *shards) {
    FileStat st;
    if (i == keep || !env_->StatPath(shards_->path(i), &st).ok()) continue;
    std::vector<std::unique_ptr<FileLock>> pin;
    std::unique_ptr<FileLock> want;
    bool unpinned = false, unwanted = false;
    SHARDPACK_RETURN_IF_ERROR(TakeForEviction(i, &pin, &unpinned));
    if (!unpinned) continue;
    SHARDPACK_RETURN_IF_ERROR(env_->TryLockFile(shards_->path(i) + ".want", false, &want, &unwanted, modes_.file()));
    const bool wanted = !unwanted;
    if (wanted && !wanted_too) continue;
    const bool better =
        victim == shards_->size() || (victim_wanted && !wanted) ||
        (victim_wanted == wanted && (key(i, wanted) > key(victim, victim_wanted) ||
                                     (key(i, wanted) == key(victim, victim_wanted) && st.mtime_ns < victim_mtime)));
    if (better) {
      victim = i, victim_wanted = wanted, victim_mtime = st.mtime_ns, victim_size = st.size;
    }
  }
  if (victim == shards_->size()) return Status::OK();
  // Pinned since the scan: not this one (the next call looks again).
  std::vector<std::unique_ptr<FileLock>> held;
  bool unpinned = false;
  SHARDPACK_RETURN_IF_ERROR(TakeForEviction(victim, &held, &unpinned));
  if (!unpinned) {
    *evicted = true;  // something changed: count again
    return Status::OK();
  }
  RemoveCachedCopy(env_, shards_->path(victim));
  shards->erase(std::find(shards->begin(), shards->end(), victim));
  *evicted = true;
  *freed = victim_size;
  return Status::OK();
}

}  // namespace shardpack
