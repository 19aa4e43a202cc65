// Random access to the samples of a WebDataset: the DALI index locates each sample's image member,
// which is read with one pread. A shardpack dataset folder, or tar shards by path from any tool
// (indexed on open when they have no DALI index beside them).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/shard_locator.h"
#include "formats/wds/wds_shard_index.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class WdsDatasetReader final : public DatasetReader {
 public:
  static Status Open(Env* env, const std::string& dir, Manifest manifest, std::unique_ptr<DatasetReader>* reader);
  // Shards by path, in the order given. The manifest it reports lists them with their sample counts.
  static Status OpenShards(Env* env, const std::vector<std::string>& paths, std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;

 private:
  // The location of sample `index` (which CheckIndex accepted) and its shard.
  const WdsSampleLocation* Find(uint64_t index, size_t* shard) const;
  explicit WdsDatasetReader(Manifest manifest)
      : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}

  ShardLocator locator_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;  // one per shard
  std::vector<std::vector<WdsSampleLocation>> entries_;   // per shard, per sample
};

}  // namespace shardpack
