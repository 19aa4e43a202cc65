// Random access to the samples of a WebDataset: the DALI index locates each sample's image member,
// which is read with one pread. A shardpack dataset folder, or tar shards by path from any tool
// (indexed on open when they have no DALI index beside them).
//
// A dataset folder opens from its manifest alone: a shard's sample table and DALI index are read
// when one of its samples is first asked for, kept in a compact form (fixed-width records, the keys
// back to back) with the shard open, within ShardIndexCache's bound (formats/common/shard_index_cache.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/shard_index_cache.h"
#include "formats/common/shard_locator.h"
#include "formats/wds/wds_shard_index.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class WdsDatasetReader final : public DatasetReader {
 public:
  // index_memory: the bound of the shards' indexes kept (ShardIndexCache).
  static Status Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                     uint64_t index_memory, std::unique_ptr<DatasetReader>* reader);
  // Shards by path, in the order given, each indexed now (their sample counts make the manifest it
  // reports, which lists them).
  static Status OpenShards(Env* env, const std::vector<std::string>& paths, uint64_t index_memory,
                           std::unique_ptr<DatasetReader>* reader);
  ~WdsDatasetReader() override;
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;

  // One shard's samples, as kept.
  struct ShardSamples;

 private:
  explicit WdsDatasetReader(std::shared_ptr<const CompactManifest> manifest)
      : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}
  // The shard of sample `index` (which CheckIndex accepted), loaded if need be, and the sample's
  // position in it.
  Status Find(uint64_t index, std::shared_ptr<const ShardSamples>* shard, size_t* local) const;

  ShardLocator locator_;
  std::unique_ptr<ShardIndexCache<ShardSamples>> shards_;
};

}  // namespace shardpack
