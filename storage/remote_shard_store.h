// RemoteShardStore: the shards of a remote dataset, each downloaded when first needed or, better,
// before: a few download threads fetch the shards in the order the reader says it will need them
// (Plan), a window of `prefetch_shards` ahead of where it has got (Reached). Readers take a shard
// with Pin, which waits for its download when it has not arrived yet.
//
// Cached mode keeps the shards in a cache folder (FetchIntoCache: checked, published atomically,
// one download per machine), bounded by cache_limit for all the processes that share the folder
// (SharedCacheSpace: a download waits for room that unpinned shards can make, but a shard a reader
// waits for is fetched even past the limit); streaming mode keeps them in memory and drops
// each as soon as the plan has passed it. Either way a shard a reader holds is never dropped: a
// Pin hands out a shared_ptr, and under mu_ a use_count of 1 means that only the store holds it,
// because copies are made under mu_ only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ground/shard_buffer.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/env.h"
#include "shardpack/status.h"
#include "storage/cache_folder.h"
#include "storage/http/http_client.h"
#include "storage/remote_shard_list.h"
#include "storage/shared_cache_space.h"

namespace shardpack {

struct ShardStoreOptions {
  // Cached mode: bytes of this dataset's shards the folder may hold, counted for every process that
  // uses it; 0: no bound. `cache_dir`: the dataset's folder there (space.lock lies in it).
  uint64_t cache_limit = 0;
  std::string cache_dir;
  uint32_t prefetch_shards = 8;
  uint32_t downloads = 4;
  CacheModes modes;  // cached mode: of the files it writes
};

struct ShardStoreCounts {
  uint64_t fetched = 0;  // shards downloaded (or found published by another process)
  uint64_t evicted = 0;  // shards dropped to make room, or done with (streaming)
  // Most shard bytes held (on disk or in memory) at once; with a cache limit, the most the folder
  // held, all its processes together, when this one counted.
  uint64_t peak_bytes = 0;
};

class RemoteShardStore {
 public:
  using NewClient = std::function<std::unique_ptr<HttpClient>()>;
  // Streaming mode when the shards have no path (RemoteShardList::streaming). Starts
  // options.downloads threads, each with a client of its own from new_client.
  RemoteShardStore(Env* env, std::shared_ptr<const RemoteShardList> shards, const ShardStoreOptions& options,
                   NewClient new_client);
  RemoteShardStore(Env* env, std::vector<RemoteShard> shards, const ShardStoreOptions& options, NewClient new_client)
      : RemoteShardStore(env, NewRemoteShardList(std::move(shards)), options, std::move(new_client)) {}
  ~RemoteShardStore();
  RemoteShardStore(const RemoteShardStore&) = delete;
  RemoteShardStore& operator=(const RemoteShardStore&) = delete;

  const RemoteShardList& shards() const { return *shards_; }
  // Shard `shard`'s bytes, held until *file is released. A failed download fails every Pin of
  // that shard with its error until the next Plan (no retry storm).
  Status Pin(size_t shard, std::shared_ptr<const RandomAccessFile>* file);
  // The shards the reader will read, in the order of their first use, and where its reads are
  // (`position`); a new plan (a new epoch, or the next window of one) replaces the old one and
  // clears failures. A shard it does not list is not needed for now: it goes when nobody holds it.
  void Plan(const std::vector<ShardUse>& uses, uint64_t position = 0);
  // The reader has got to `position`: shards whose last use lies before it are done.
  void Reached(uint64_t position);
  ShardStoreCounts counts() const;

 private:
  enum class State { kAbsent, kFetching, kOnDisk, kOpen, kFailed };
  struct Slot {
    State state = State::kAbsent;
    std::shared_ptr<const RandomAccessFile> file;  // kOpen
    std::shared_ptr<ShardBuffer> buffer;           // streaming: the bytes `file` reads
    std::unique_ptr<FileLock> pin, want;           // shared cache: while open, and while wanted
    Status error;                                  // kFailed
    bool planned = false;
    uint64_t first = 0, last = 0;  // of the plan
  };

  void DownloadLoop(HttpClient* http);
  // The next shard to download (a waited-for one first, then the window in plan order); false when
  // there is none, or no room for one. Called under mu_.
  bool TakeJob(size_t* shard, bool* waited_for);
  // Shared cache: room for the shard under the folder's limit, then the download; *full when there
  // is none for now. Called without mu_.
  Status FetchShared(size_t shard, bool waited_for, const ShardNextUse& next_use, HttpClient* http, bool* full,
                     std::unique_ptr<FileLock>* want);
  // Drops (streaming) or lets other processes evict (shared cache) the shards whose planned reads
  // lie before position_, and with unplanned_too (a new plan) those no plan lists: read outside
  // any plan (a Pin waited for them), they go when the plan moves on, not at the next Reached,
  // which could come between their download and the Pin that asked. Called under mu_.
  void DropDone(bool unplanned_too);
  // Downloads the shard; streaming: into *buffer (reused when it has room).
  Status Fetch(size_t shard, HttpClient* http, std::shared_ptr<ShardBuffer>* buffer,
               std::shared_ptr<const RandomAccessFile>* file);
  // Frees room for `bytes` under cache_limit by evicting the shards needed latest outside the
  // window; false when that is not enough. Called under mu_.
  bool MakeRoom(uint64_t bytes);
  // The first use at which the window ends: shards planned to start later are outside it.
  uint64_t WindowEnd() const;
  void Evict(size_t shard);
  bool Held(const Slot& s) const { return s.file != nullptr && s.file.use_count() > 1; }
  // A planned shard's slot (Plan made it; ForgetIdle keeps it while planned).
  const Slot& PlannedSlot(size_t shard) const { return slots_.at(shard); }
  // Drops the slots that say nothing a fresh one would not (absent, unplanned, nothing held), so
  // that slots_ holds the shards being worked on, not the dataset's. Called under mu_; invalidates
  // references to slots, so a caller that waits looks its slot up again.
  void ForgetIdle();

  Env* const env_;
  const std::shared_ptr<const RemoteShardList> shards_;
  const ShardStoreOptions options_;
  const bool in_memory_;
  std::unique_ptr<SharedCacheSpace> space_;  // cached mode with a limit

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // downloaders: a job may be there
  std::condition_variable done_cv_;  // Pin: a download finished
  // By shard; a shard without one is absent and unplanned (operator[] makes it so): at 100,000
  // shards a slot each cost 12 MB in every rank, for the handful being downloaded and read.
  std::unordered_map<size_t, Slot> slots_;
  std::vector<uint32_t> plan_;  // shards by first use
  uint64_t position_ = 0;
  std::deque<size_t> waited_for_;  // shards a Pin waits for
  // Streaming: buffers of evicted shards, reused for the next downloads, whose bytes then go into
  // pages the process has already (ground/shard_buffer.h).
  std::vector<std::shared_ptr<ShardBuffer>> spare_buffers_;
  uint64_t held_bytes_ = 0;  // shards on disk or in memory, and being downloaded
  ShardStoreCounts counts_;
  bool stop_ = false;
  std::vector<std::thread> downloaders_;
};

}  // namespace shardpack
