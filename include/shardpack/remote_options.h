// How a dataset behind a URL (http://, https://, s3://) is read, and an s3:// output written:
// docs/remote.md. The library reads no environment variables: the CLI and the Python module fill
// these from SHARDPACK_CACHE, SHARDPACK_HTTP_*, AWS_* and the others docs/remote.md lists; a
// program embedding the library sets them itself.
#pragma once

#include <cstdint>
#include <string>

namespace shardpack {

struct RemoteOptions {
  // Cached mode: whole shards are downloaded into this folder, checked against the manifest's
  // XXH64, and read from there; processes on one node share it (one download per shard). Empty:
  // streaming mode (below). The CLI and Python: $SHARDPACK_CACHE unless given.
  std::string cache_dir;
  // The cache folder is shared by a team's accounts (group-writable, setgid) instead of private to
  // this user; $SHARDPACK_CACHE_TEAM=1.
  bool cache_team = false;
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
  // Random access without a cache folder reads each sample by HTTP range requests (docs/remote.md),
  // and needs a format read through shards (not LMDB: InvalidArgument naming the fixes).
  bool sequential = false;
  // Not about URLs, but how every reader DatasetReader::Open makes keeps the shards' indexes (sample
  // tables, DALI indexes), read when a shard is first needed: at most this many bytes of them, the
  // least recently used dropped past it; 0: kDefaultIndexMemory, 256 MiB ($SHARDPACK_INDEX_MEMORY).
  uint64_t index_memory = 0;

  // The HTTP client's limits; 0 keeps the default docs/remote.md gives ($SHARDPACK_HTTP_*).
  struct Http {
    int attempts = 0;                // per request ($SHARDPACK_HTTP_ATTEMPTS)
    double timeout_seconds = 0;      // connect, and stalled transfers ($SHARDPACK_HTTP_TIMEOUT)
    double max_backoff_seconds = 0;  // cap of the wait between attempts ($SHARDPACK_HTTP_MAX_BACKOFF)
    double retry_seconds = 0;        // no retry starts after this ($SHARDPACK_HTTP_RETRY_SECONDS)
    uint64_t max_bytes = 0;          // bodies of unknown size ($SHARDPACK_HTTP_MAX_BYTES)
  } http;

  // S3 and S3-compatible stores (s3:// locations and outputs).
  struct S3 {
    std::string access_key_id, secret_access_key;  // $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY
    std::string session_token;                     // temporary credentials ($AWS_SESSION_TOKEN)
    std::string region;                            // empty: us-east-1 ($AWS_REGION, else $AWS_DEFAULT_REGION)
    std::string endpoint_url;                      // a store other than AWS, addressed path-style ($AWS_ENDPOINT_URL)
    bool path_style = false;                       // AWS addressed path-style ($SHARDPACK_S3_PATH_STYLE=1)
    // Writing: files larger than part_size go up in parts of that size (0: 64 MiB;
    // $SHARDPACK_S3_PART_SIZE), `uploads` at once (0: 2; $SHARDPACK_S3_UPLOADS), staged in a
    // folder made under staging_parent (empty: /tmp; $SHARDPACK_STAGING, else $TMPDIR).
    uint64_t part_size = 0;
    int uploads = 0;
    std::string staging_parent;
  } s3;
};

}  // namespace shardpack
