// SharedCacheSpace: the shards of one dataset in a cache folder that several processes use at once
// (the ranks and loader workers of a node), kept within one cache_limit for all of them together.
//
// The state is the folder itself, never one process's count, so that it holds for any number of
// processes and survives any of them being killed (flock locks die with their holder):
//  - a shard takes room when its file is there, or while a process downloads it (it holds the
//    shard's fetch lock, `path`.lock, exclusively);
//  - a shard is pinned while a process reads it (a shared lock on `path`.pin), or while one
//    downloads or checks it (its fetch lock): never evicted;
//  - a shard is wanted while a process has fetched it for reads still to come (a shared lock on
//    `path`.want): never evicted for a prefetch, and for a shard a reader waits for only when
//    nothing else can go;
//  - space.lock serialises the decisions: a download starts only when, under it, the room was
//    counted, made (unpinned shards evicted: unwanted ones first, then the one the deciding process
//    needs latest, then the oldest) and taken (the
//    fetch lock taken before space.lock is let go, so every later count sees it).
// A reader pins a shard before it opens it, and an evictor removes a shard only while it holds
// the pin exclusively: a shard found and then evicted before it was pinned is missing when opened,
// and fetched again.
//
// The ledger, space.ledger, keeps a decision's work off the dataset's shard count (a stat of every
// shard per download made an epoch quadratic in it: 4.3x the time of no limit at 1,500 shards).
// It names every shard whose room was taken, written under space.lock before the download starts,
// so no shard file appears that it does not name: a header line, then a line a change, "+name" or
// "-name". Each process keeps the file open and what it says, so a decision reads only the lines
// others appended since and appends its own (no file opened: space.lock is kept open too, let go
// and taken again); the file is written again whole once it holds more than twice the lines it
// names. A decision under the limit by its count (the manifest's sizes) looks at no other shard. Over the limit, its
// entries are checked (a stat each; a missing file whose fetch lock is free, a dead download, leaves it) and the
// victims are chosen among them: work in the shards the folder holds. A missing or unreadable ledger (a folder from
// before it) is rebuilt from one read of the folder.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ground/name_index.h"
#include "shardpack/env.h"
#include "shardpack/status.h"
#include "storage/cache_folder.h"
#include "storage/remote_shard_list.h"

namespace shardpack {

// Shard -> when this process reads it next. Only the shards of its plan: a decision's work follows
// the plan, not the dataset (a vector of every shard, filled per download, was 800 KB at 100,000).
using ShardNextUse = std::unordered_map<size_t, uint64_t>;

class SharedCacheSpace {
 public:
  // shards: each shard's file in the dataset's cache folder `dir` (RemoteShardList::path), and its size.
  SharedCacheSpace(Env* env, std::string dir, std::shared_ptr<const RemoteShardList> shards, uint64_t limit,
                   CacheModes modes);

  enum class Room { kTaken, kFull, kFetchedElsewhere };
  // Room for shard `shard`: kTaken with *fetch_lock held (download it now, then let the lock go);
  // kFetchedElsewhere when it is there already or another process is downloading it (wait on its
  // fetch lock: FetchIntoCache); kFull when the limit leaves no room and nothing can be evicted.
  // `force` takes the room past the limit rather than answer kFull (a shard a reader waits for).
  // next_use: when this process reads a shard next (its plan's first use), so that among equals the
  // one it needs latest goes first; a shard it does not list is never read again; may be empty.
  // *evicted: how many shards this call removed; *used: the bytes the folder then holds, the new
  // shard's included when kTaken.
  Status Reserve(size_t shard, bool force, const ShardNextUse& next_use, std::unique_ptr<FileLock>* fetch_lock,
                 Room* room, uint32_t* evicted, uint64_t* used);

  // A shared lock on the shard's pin or want file; *held false when an evictor holds it now
  // (pin: the shard is being removed).
  Status Pin(size_t shard, std::unique_ptr<FileLock>* lock, bool* held);
  Status Want(size_t shard, std::unique_ptr<FileLock>* lock, bool* held);

 private:
  // Under space.lock: the shards the ledger names (*changed when it was rebuilt).
  Status ReadLedger(std::vector<size_t>* shards, bool* changed);
  // Keeps the shards that take room: the file is there, or a download of it is under way (its
  // fetch lock is held); *changed when some went.
  Status Verify(std::vector<size_t>* shards, bool* changed);
  // The bytes the shards take by the manifest's sizes (no look at the folder), and as the folder
  // has them (a stat each; a download under way: its size).
  uint64_t Counted(const std::vector<size_t>& shards) const;
  uint64_t Used(const std::vector<size_t>& shards);
  // The shard's file name relative to dir_ (its path when it lies elsewhere).
  std::string NameInFolder(size_t shard) const;
  // The shard named `name` by NameInFolder, or false.
  bool ShardNamed(std::string_view name, size_t* shard) const;
  // Writes the ledger as `shards`: the changes appended, or the file written again whole (a
  // version 1 ledger, one grown to twice its names, an Env that cannot append); on failure removes
  // it, so that the next decision rebuilds it by a scan.
  void WriteLedger(const std::vector<size_t>& shards);
  // The ledger file opened (view_ reset to it), and its lines from view_.offset on applied.
  Status OpenLedger(const std::string& path);
  Status ReadLedgerTail();
  // space.lock taken (the file kept open between decisions), and let go.
  Status LockSpace();
  void UnlockSpace();
  // Locks the shard's pin and fetch lock exclusively if nobody holds them: *taken false otherwise.
  Status TakeForEviction(size_t shard, std::vector<std::unique_ptr<FileLock>>* locks, bool* taken);
  // Evicts one of `shards` (the ledger's) that nobody pins, and drops it from `shards`: *evicted
  // false when there is none; *freed the bytes it held (0 when it was pinned meanwhile and nothing
  // went: count again). wanted_too: wanted shards may go too (after every unwanted one).
  Status EvictOne(size_t keep, const ShardNextUse& next_use, bool wanted_too, std::vector<size_t>* shards,
                  bool* evicted, uint64_t* freed);

  Env* const env_;
  const std::string dir_;
  const std::shared_ptr<const RemoteShardList> shards_;
  const uint64_t limit_;
  const CacheModes modes_;
  NameIndex by_name_;  // NameInFolder(shard) -> shard
  bool flat_ = true;   // every shard's file directly in dir_

  // What this process knows of the ledger, kept between decisions so that each reads only what
  // others appended since (under space.lock, and decide_mu_ in this process).
  struct LedgerView {
    std::unique_ptr<RandomAccessFile> reader;  // the file read, held open
    std::unique_ptr<WritableFile> appender;    // the same file, to append to; null: rewrite
    uint64_t device = 0, inode = 0;            // its identity
    uint64_t offset = 0;                       // bytes applied
    uint64_t lines = 0;                        // lines applied (changes the file holds)
    bool v2 = false;
    std::vector<bool> named;    // per shard: takes room by the ledger
    std::vector<size_t> order;  // the named shards, first named first (and some no longer named)
    // The named shards in order.
    std::vector<size_t> Live();
    // One line of the file (or of what this process appends).
    void Apply(std::string_view line, const SharedCacheSpace& space);
  };
  std::mutex decide_mu_;
  std::unique_ptr<FileLock> space_lock_;  // space.lock, open between decisions
  LedgerView view_;
};

}  // namespace shardpack
