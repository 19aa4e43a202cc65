// Random access to the samples of a shardpack WebDataset: the DALI index locates each sample's
// image member, which is read with one pread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/shard_locator.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class WdsDatasetReader final : public DatasetReader {
 public:
  static Status Open(Env* env, const std::string& dir, Manifest manifest, std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;

 private:
  struct Entry {
    std::string key;
    int32_t label;
    ImageFormat format;
    uint64_t offset;  // of the image member's data in its shard
    uint64_t size;
  };
  explicit WdsDatasetReader(Manifest manifest) : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}

  ShardLocator locator_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;  // one per shard
  std::vector<std::vector<Entry>> entries_;               // per shard, per sample
};

}  // namespace shardpack
