#include "storage/remote_shard_store.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "ground/memory_file.h"
#include "ground/status_of_call.h"
#include "storage/shard_download.h"

namespace shardpack {

RemoteShardStore::RemoteShardStore(Env* env, std::shared_ptr<const RemoteShardList> shards,
                                   const ShardStoreOptions& options, NewClient new_client)
    : env_(env), shards_(std::move(shards)), options_(options), in_memory_(shards_->streaming()) {
  if (!in_memory_ && options_.cache_limit > 0) {
    std::string dir = options_.cache_dir;
    if (dir.empty() && shards_->size() > 0) {
      const std::string first = shards_->path(0);
      dir = first.substr(0, first.find_last_of('/'));
    }
    space_ = std::make_unique<SharedCacheSpace>(env_, dir, shards_, options_.cache_limit, options_.modes);
  }
  // Shards an earlier run left in the cache folder count against the bound when their record says
  // they hold the manifest's bytes (a stat, no read). Any other is checked, and fetched again if
  // need be, when it is wanted (FetchIntoCache).
  for (size_t i = 0; i < shards_->size() && !in_memory_; ++i) {
    const RemoteShard r = shards_->shard(i);
    if (IsCheckedCopy(env_, r.path, r.xxh64)) {
      slots_[i].state = State::kOnDisk;
      held_bytes_ += r.bytes;
    }
  }
  counts_.peak_bytes = held_bytes_;
  for (uint32_t i = 0; i < std::max<uint32_t>(1, options_.downloads); ++i) {
    std::shared_ptr<HttpClient> http(new_client());  // one per thread: a curl handle is not shared
    downloaders_.emplace_back([this, http] { DownloadLoop(http.get()); });
  }
}

RemoteShardStore::~RemoteShardStore() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : downloaders_) t.join();
}

Status RemoteShardStore::Pin(size_t shard, std::shared_ptr<const RandomAccessFile>* file) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Slot& s = slots_[shard];  // (looked up again after each wait: ForgetIdle may have dropped it)
    switch (s.state) {
      case State::kOpen:
        *file = s.file;
        return Status::OK();
      case State::kFailed:
        return s.error;
      case State::kOnDisk: {
        // Shared cache: pinned before it is opened, so that no process evicts it while it is read;
        // a pin refused means an evictor is removing it.
        bool pinned = true;
        if (space_ != nullptr && s.pin == nullptr && !space_->Pin(shard, &s.pin, &pinned).ok()) pinned = false;
        std::unique_ptr<RandomAccessFile> opened;
        // Reopened by its path: what is opened must be the copy that was checked (OpenCheckedCopy),
        // or it is fetched again, which hashes or replaces it.
        const RemoteShard r = shards_->shard(shard);
        if (pinned && OpenCheckedCopy(env_, r.path, r.xxh64, &opened).ok()) {
          s.file = std::move(opened);
          s.state = State::kOpen;
        } else {  // another process sharing the cache evicted it: fetched again
          s.pin.reset();
          s.want.reset();
          s.state = State::kAbsent;
          held_bytes_ -= shards_->bytes(shard);
        }
        continue;
      }
      case State::kAbsent:
        waited_for_.push_back(shard);
        work_cv_.notify_one();
        done_cv_.wait(lock);
        continue;
      case State::kFetching:
        done_cv_.wait(lock);
        continue;
    }
  }
}

void RemoteShardStore::Plan(const std::vector<ShardUse>& uses, uint64_t position) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [shard, s] : slots_) {
      s.planned = false;
      if (s.state == State::kFailed) s.state = State::kAbsent, s.error = Status::OK();
    }
    plan_.clear();
    for (const ShardUse& u : uses) {
      if (u.shard >= shards_->size()) continue;
      Slot& s = slots_[u.shard];
      s.planned = true;
      s.first = u.first;
      s.last = u.last;
      plan_.push_back(u.shard);
    }
    std::stable_sort(plan_.begin(), plan_.end(),
                     [&](uint32_t a, uint32_t b) { return PlannedSlot(a).first < PlannedSlot(b).first; });
    position_ = position;
    DropDone(/*unplanned_too=*/true);
  }
  work_cv_.notify_all();
}

void RemoteShardStore::Reached(uint64_t position) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    position_ = std::max(position_, position);
    DropDone(/*unplanned_too=*/false);
  }
  work_cv_.notify_all();
}

ShardStoreCounts RemoteShardStore::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void RemoteShardStore::DropDone(bool unplanned_too) {
  const auto done = [&](const Slot& s) { return s.planned ? s.last < position_ : unplanned_too; };
  // Streaming: a shard the reads are done with leaves memory at once.
  for (auto& [i, s] : slots_) {
    if (!in_memory_) break;
    if (s.state == State::kOpen && done(s) && !Held(s)) Evict(i);
  }
  // Shared cache: other processes may evict it.
  for (auto& [i, s] : slots_) {
    if (space_ == nullptr) break;
    if ((s.state != State::kOpen && s.state != State::kOnDisk) || !done(s) || Held(s)) continue;
    s.file.reset();
    s.pin.reset();
    s.want.reset();
    s.state = State::kOnDisk;  // still there, for this process or another, until someone evicts it
  }
  ForgetIdle();
}

void RemoteShardStore::ForgetIdle() {
  for (auto it = slots_.begin(); it != slots_.end();) {
    const Slot& s = it->second;
    const bool idle = s.state == State::kAbsent && !s.planned && s.file == nullptr && s.buffer == nullptr &&
                      s.pin == nullptr && s.want == nullptr;
    it = idle ? slots_.erase(it) : std::next(it);
  }
}

void RemoteShardStore::DownloadLoop(HttpClient* http) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    size_t shard = 0;
    bool waited_for = false;
    if (!TakeJob(&shard, &waited_for)) {
      work_cv_.wait(lock);
      continue;
    }
    slots_[shard].state = State::kFetching;
    held_bytes_ += shards_->bytes(shard);
    if (space_ == nullptr) counts_.peak_bytes = std::max(counts_.peak_bytes, held_bytes_);
    std::shared_ptr<ShardBuffer> buffer;
    if (in_memory_) {
      if (spare_buffers_.empty()) {
        buffer = std::make_shared<ShardBuffer>();
      } else {
        buffer = std::move(spare_buffers_.back());
        spare_buffers_.pop_back();
      }
    }
    std::shared_ptr<const RandomAccessFile> file;
    std::unique_ptr<FileLock> want;
    bool full = false;
    ShardNextUse next_use;  // shared cache: this process's preference among evictions (its planned shards)
    if (space_ != nullptr) {
      for (const auto& [i, s] : slots_) {
        if (s.planned && s.last >= position_) next_use.emplace(i, s.first);
      }
    }
    lock.unlock();
    // (An exception here, say memory for a shard buffer refused, fails this shard, not the process.)
    const Status s = StatusOfCall("downloading a shard", [&] {
      return space_ != nullptr ? FetchShared(shard, waited_for, next_use, http, &full, &want)
                               : Fetch(shard, http, &buffer, &file);
    });
    lock.lock();
    Slot& slot = slots_[shard];
    if (s.ok() && full) {
      // No room under the folder's limit for now: other processes free it as they read on, and
      // tell nobody, so look again in a while (or at once for a shard a reader waits for).
      slot.state = State::kAbsent;
      held_bytes_ -= shards_->bytes(shard);
      done_cv_.notify_all();  // a reader that waited for this prefetch now asks for it: fetched at once
      work_cv_.wait_for(lock, std::chrono::milliseconds(50));
      continue;
    }
    if (s.ok()) {
      slot.state = space_ != nullptr ? State::kOnDisk : State::kOpen;  // shared: opened when pinned
      slot.file = std::move(file);
      slot.want = std::move(want);
      slot.buffer = std::move(buffer);
      ++counts_.fetched;
    } else {
      slot.state = State::kFailed;
      // A shard that keeps arriving damaged is a failed download, not damaged samples for the
      // loader to skip one by one (it skips DataLoss).
      slot.error = s.code() == Status::Code::kDataLoss ? Status::IOError(s.message()) : s;
      held_bytes_ -= shards_->bytes(shard);
    }
    done_cv_.notify_all();
  }
}

bool RemoteShardStore::TakeJob(size_t* shard, bool* waited_for) {
  // A shard a reader waits for comes first, even past the bound: waiting for room that only that
  // reader could free would never end.
  while (!waited_for_.empty()) {
    *shard = waited_for_.front();
    waited_for_.pop_front();
    if (slots_[*shard].state != State::kAbsent) continue;
    MakeRoom(shards_->bytes(*shard));
    *waited_for = true;
    return true;
  }
  *waited_for = false;
  const uint64_t window_end = WindowEnd();
  for (const uint32_t i : plan_) {
    const Slot& s = PlannedSlot(i);
    if (s.first > window_end) break;
    if (s.last < position_ || s.state != State::kAbsent) continue;
    if (!MakeRoom(shards_->bytes(i))) return false;
    *shard = i;
    return true;
  }
  return false;
}

uint64_t RemoteShardStore::WindowEnd() const {
  const uint32_t ahead = options_.prefetch_shards;
  uint32_t seen = 0;
  for (const uint32_t i : plan_) {
    if (PlannedSlot(i).first <= position_) continue;
    if (++seen > ahead) return PlannedSlot(i).first - 1;
  }
  return std::numeric_limits<uint64_t>::max();
}

bool RemoteShardStore::MakeRoom(uint64_t bytes) {
  // Shared cache: the folder's room is counted and made under its lock (FetchShared).
  if (in_memory_ || options_.cache_limit == 0 || space_ != nullptr) return true;
  const uint64_t window_end = WindowEnd();
  while (held_bytes_ + bytes > options_.cache_limit) {
    // The shard needed latest: one the epoch is done with, or that it does not read, before one
    // it reads later; never one a reader holds, one the reads are in, or one in the window.
    constexpr size_t kNone = ~size_t(0);
    size_t victim = kNone;
    uint64_t victim_next = 0;
    for (const auto& [i, s] : slots_) {
      if ((s.state != State::kOnDisk && s.state != State::kOpen) || Held(s)) continue;
      const bool needed = s.planned && s.last >= position_;
      if (needed && s.first <= window_end) continue;
      const uint64_t next = needed ? s.first : std::numeric_limits<uint64_t>::max();
      // (Among equals the lowest shard, whatever order the slots are kept in.)
      if (victim == kNone || next > victim_next || (next == victim_next && i < victim)) victim = i, victim_next = next;
    }
    if (victim == kNone) return false;
    Evict(victim);
  }
  return true;
}

void RemoteShardStore::Evict(size_t shard) {
  Slot& s = slots_[shard];
  s.file.reset();
  // The file was the buffer's only other owner (Evict takes no held shard): it can be reused. One
  // spare at most: a spare's pages stay the process's, a shard's size each (docs/remote.md counts
  // it in streaming mode's memory).
  constexpr size_t kMaxSpareBuffers = 1;
  if (s.buffer != nullptr && s.buffer.use_count() == 1 && spare_buffers_.size() < kMaxSpareBuffers) {
    spare_buffers_.push_back(std::move(s.buffer));
  }
  s.buffer.reset();
  s.state = State::kAbsent;
  held_bytes_ -= shards_->bytes(shard);
  ++counts_.evicted;
  // A process that has the file open keeps reading it: POSIX frees the blocks at its last close.
  if (!in_memory_) RemoveCachedCopy(env_, shards_->path(shard));
}

Status RemoteShardStore::FetchShared(size_t shard, bool waited_for, const ShardNextUse& next_use, HttpClient* http,
                                     bool* full, std::unique_ptr<FileLock>* want) {
  const RemoteShard r = shards_->shard(shard);
  std::unique_ptr<FileLock> fetch_lock;
  SharedCacheSpace::Room room = SharedCacheSpace::Room::kFull;
  uint32_t evicted = 0;
  uint64_t used = 0;
  SHARDPACK_RETURN_IF_ERROR(space_->Reserve(shard, waited_for, next_use, &fetch_lock, &room, &evicted, &used));
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.evicted += evicted;
    counts_.peak_bytes = std::max(counts_.peak_bytes, used);  // the folder's, all processes together
  }
  *full = room == SharedCacheSpace::Room::kFull;
  if (*full) return Status::OK();
  if (room == SharedCacheSpace::Room::kTaken) {
    SHARDPACK_RETURN_IF_ERROR(FetchIntoCacheLocked(env_, http, r.url, r.path, r.xxh64, r.bytes, options_.modes));
  } else {  // there already, or another process downloads it: wait for that one
    SHARDPACK_RETURN_IF_ERROR(FetchIntoCache(env_, http, r.url, r.path, r.xxh64, r.bytes, options_.modes));
  }
  fetch_lock.reset();
  // Wanted until this process is done with it: evictors take other shards first. A shard that
  // cannot be marked is only less protected.
  bool held = false;
  (void)space_->Want(shard, want, &held);
  return Status::OK();
}

Status RemoteShardStore::Fetch(size_t shard, HttpClient* http, std::shared_ptr<ShardBuffer>* buffer,
                               std::shared_ptr<const RandomAccessFile>* file) {
  const RemoteShard r = shards_->shard(shard);
  if (in_memory_) {
    SHARDPACK_RETURN_IF_ERROR(DownloadToMemory(http, r.url, r.xxh64, r.bytes, buffer->get()));
    *file = NewMemoryFile(std::shared_ptr<const ShardBuffer>(*buffer), r.url);
    return Status::OK();
  }
  SHARDPACK_RETURN_IF_ERROR(FetchIntoCache(env_, http, r.url, r.path, r.xxh64, r.bytes, options_.modes));
  std::unique_ptr<RandomAccessFile> opened;
  Status s = OpenCheckedCopy(env_, r.path, r.xxh64, &opened);
  if (s.code() == Status::Code::kDataLoss) {
    // Changed between the fetch and the open (a team member's file, a swap): once more, under the lock.
    SHARDPACK_RETURN_IF_ERROR(FetchIntoCache(env_, http, r.url, r.path, r.xxh64, r.bytes, options_.modes));
    s = OpenCheckedCopy(env_, r.path, r.xxh64, &opened);
  }
  SHARDPACK_RETURN_IF_ERROR(s);
  *file = std::move(opened);
  return Status::OK();
}

}  // namespace shardpack
