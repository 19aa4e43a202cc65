// Reading an MDS shard's file: whole (convert, verify, stat; a compressed shard must be), checked
// against what index.json says of it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/common/whole_file.h"
#include "formats/mds/mds_index.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

// The file as stored (zip_data's when compressed, else raw_data's) into *stored: DataLoss naming
// it when its size is not index.json's.
Status ReadMdsStoredShard(Env* env, const std::string& dir, const MdsShardInfo& shard, std::string* stored);
// The raw shard from a compressed shard's stored bytes: its zstd data decompressed (to exactly
// raw_data.bytes), or LitData's framing undone. An uncompressed shard is its stored bytes, uncopied.
Status DecompressMdsShard(const std::string& path, const MdsShardInfo& shard, std::string_view stored,
                          std::string* raw);
// Both: the raw shard of `shard` into *raw.
Status ReadMdsShard(Env* env, const std::string& dir, const MdsShardInfo& shard, std::string* raw);

// Shard `shard`'s raw bytes into *file, to read whole: an uncompressed shard mapped, a compressed
// one decompressed. DataLoss naming the file when its size is not index.json's.
Status LoadMdsShard(Env* env, const std::string& dir, const MdsShardInfo& shard, WholeFile* file);

// Checks `data` against the digests index.json lists for `file`. shardpack computes xxh32, xxh64,
// xxh3_64 and xxh128 (Streaming's names); others (md5, sha1, ...) are listed in *unchecked. Each
// mismatch goes into *problems as a sentence.
void CheckMdsHashes(const MdsFile& file, std::string_view data, std::vector<std::string>* problems,
                    std::vector<std::string>* unchecked);

}  // namespace shardpack
