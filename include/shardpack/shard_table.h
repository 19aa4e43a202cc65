// ShardTable: a manifest's shard list as a reader keeps it, compactly (issue 39). A ShardEntry costs
// about 470 bytes a shard (a struct of 280 and six names and checksums on the heap, each just past
// the short-string limit); every rank of a node holds its dataset's list for the whole run, 47 MB at
// 100,000 shards. Here the counts lie in two arrays and the rest of each entry (names, checksums,
// side files, field counts) is serialized back to back in one buffer, read back when asked: about
// 130 bytes a shard.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/manifest.h"

namespace shardpack {

class ShardTable {
 public:
  ShardTable() = default;
  explicit ShardTable(const std::vector<ShardEntry>& shards);

  size_t size() const { return samples_.size(); }
  bool empty() const { return samples_.empty(); }
  uint64_t samples(size_t i) const { return samples_[i]; }
  const std::vector<uint64_t>& sample_counts() const { return samples_; }  // samples(i) for every i
  uint64_t bytes(size_t i) const { return bytes_[i]; }
  // The shard's file (relative to the dataset folder) and its checksum (16 hex digits; empty when
  // the manifest gave none): views into the table, valid as long as it is.
  std::string_view file(size_t i) const;
  std::string_view xxh64(size_t i) const;
  // Shard i's entry, as the manifest gave it (built on each call: for the shard being opened).
  ShardEntry entry(size_t i) const;
  // The bytes the table holds, for the documented bound.
  uint64_t memory_bytes() const;

 private:
  std::vector<uint64_t> samples_, bytes_;
  std::vector<uint64_t> starts_;  // shard i's record is records_[starts_[i], starts_[i + 1])
  std::string records_;
};

// A manifest as a reader keeps it: the dataset's facts, its shard list as a ShardTable, and the
// dataset's field counts (FieldCounts of the manifest, which needs every shard's).
struct CompactManifest : ManifestHeader {
  CompactManifest() = default;
  explicit CompactManifest(Manifest manifest);

  ShardTable shards;
  std::map<std::string, uint64_t> field_counts;
};

}  // namespace shardpack
