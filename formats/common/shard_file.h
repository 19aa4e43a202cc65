// Opening a shard for random reads, and the bounds every location read from an index must keep:
// readers take offsets and sizes from side files, and a damaged or hostile one must give a clear
// error, never a huge allocation or bytes from the wrong place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ground/sample_table.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

// Opens dir/shard.file and checks that its size is the one the manifest lists (DataLoss otherwise).
Status OpenShardFile(Env* env, const std::string& dir, const ShardEntry& shard, std::unique_ptr<RandomAccessFile>* file,
                     uint64_t* bytes);

// What a reader opens of each shard that has a sample table (wds, raw).
struct OpenedShard {
  std::vector<SampleRecord> table;  // checked against the manifest's checksum of it
  std::unique_ptr<RandomAccessFile> file;
  uint64_t bytes = 0;  // the shard's size, the one the manifest lists
};

// Reads shard's sample table (ReadSampleTable) and opens the shard (OpenShardFile).
Status OpenShardWithTable(Env* env, const std::string& dir, const ShardEntry& shard, OpenedShard* opened);

// DataLoss naming shard and sample when [offset, offset + size) does not lie inside the shard.
Status CheckWithinShard(const ShardEntry& shard, const std::string& key, uint64_t offset, uint64_t size,
                        uint64_t shard_bytes);
// The same, naming the shard by its file.
Status CheckWithinShard(const std::string& shard_file, const std::string& key, uint64_t offset, uint64_t size,
                        uint64_t shard_bytes);

// Sample `key`'s bytes [offset, offset + size) of shard_file into `out`, checked against the XXH64
// its sample table lists: for a file whose reads go to a server (reads_are_requests), where nothing
// on this machine checked the shard. Bytes damaged on the way are read again, as a download is; a
// copy damaged on the server stays so, and after 3 reads the sample is DataLoss (a loader skips it
// and says so).
Status ReadCheckedSample(const RandomAccessFile& file, const std::string& shard_file, const std::string& key,
                         uint64_t offset, size_t size, uint64_t xxh64, char* out);

}  // namespace shardpack
