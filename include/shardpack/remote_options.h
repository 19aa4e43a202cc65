// How a dataset behind a URL (http://, https://, s3://) reaches the reader: docs/remote.md.
#pragma once

#include <cstdint>
#include <string>

namespace shardpack {

struct RemoteOptions {
  // Cached mode: whole shards are downloaded into this folder, checked against the manifest's
  // XXH64, and read from there; processes on one node share it (one download per shard). Empty:
  // $SHARDPACK_CACHE; when that is unset too, streaming mode (below).
  std::string cache_dir;
  // Bytes the cache may hold of this dataset; 0: no bound. Past it, the shards needed latest (or
  // no more this epoch) are deleted, never one being read. A bound below the dataset's size makes
  // a global shuffle download shards again; the streaming shuffle reads each shard once an epoch.
  uint64_t cache_limit = 0;
  // Shards downloaded ahead of the one being read, in the epoch's order of first use; 0: twice
  // `downloads`, and when streaming (shards in memory) no more than fit in 1 GiB (at least one).
  uint32_t prefetch_shards = 0;
  uint32_t downloads = 4;  // downloads at once
  // Set by readers that go through the shards front to back (the streaming shuffle, no shuffle):
  // without a cache folder the shards are then streamed into memory and never touch the disk.
  // Random access without a cache folder is refused (InvalidArgument naming both fixes).
  bool sequential = false;
};

}  // namespace shardpack
