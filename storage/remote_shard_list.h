// RemoteShardList: what a RemoteShardStore knows of its shards (each one's URL, its copy in the cache
// folder, its size and checksum), asked shard by shard. A dataset of 100,000 shards keeps these in
// its manifest's ShardTable already; as a RemoteShard each (three strings on the heap, about 200
// bytes) they came to more than the manifest itself, in every rank. So the store asks this list,
// which builds a shard's strings when they are needed: at a download, an open, an eviction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/shard_table.h"

namespace shardpack {

struct RemoteShard {
  std::string url;
  // in the cache folder; empty in streaming mode
  std::string path;
  uint64_t bytes = 0;
  std::string xxh64;
};

class RemoteShardList {
 public:
  virtual ~RemoteShardList() = default;
  virtual size_t size() const = 0;
  // The name a reader opens shard i by: within the dataset folder, or the URL of a listed shard.
  virtual std::string_view name(size_t i) const = 0;
  virtual uint64_t bytes(size_t i) const = 0;    // 0: not known (a shard list without a manifest)
  virtual std::string path(size_t i) const = 0;  // in the cache folder; empty when streaming
  // Shard i, built on each call.
  virtual RemoteShard shard(size_t i) const = 0;
  // Streaming: shards are held in memory, with no path in a cache folder.
  virtual bool streaming() const = 0;
};

// The shards as given, each named by its URL (a shard list; tests).
std::shared_ptr<const RemoteShardList> NewRemoteShardList(std::vector<RemoteShard> shards);

// The manifest's shards: each at RemoteFileUrl(base, file) and, unless `cache_dir` is empty
// (streaming), at JoinPath(cache_dir, file).
std::shared_ptr<const RemoteShardList> NewManifestShardList(std::string base, std::string cache_dir,
                                                            std::shared_ptr<const CompactManifest> manifest);

}  // namespace shardpack
