// Random access to the images of a raw dataset: one pread for a plain shard; for a zstd shard, its
// chunk is read and decompressed (the cost of random access that docs/formats/raw.md states). Text
// fields: a line of the shard's fields side file. Masks: a slot of the shard's mask array.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/shard_index_cache.h"
#include "formats/common/shard_locator.h"
#include "ground/sample_table.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class RawDatasetReader final : public DatasetReader {
 public:
  // Opens from the manifest alone: each shard's sample table, chunk index, fields lines and mask
  // presence are read when one of its samples is first asked for, and kept within
  // ShardIndexCache's bound (formats/common/shard_index_cache.h).
  static Status Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                     uint64_t index_memory, std::unique_ptr<DatasetReader>* reader);
  ~RawDatasetReader() override;
  Status Read(uint64_t index, ReadSample* out) const override;
  // Text fields from the shard's "<stem>.fields.jsonl": one pread of the sample's line.
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  // Label masks from the shard's "<stem>.<name>.npy": one pread of the sample's slot.
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override;

  // One shard's files and index, as kept.
  struct ShardIndex;

 private:
  explicit RawDatasetReader(std::shared_ptr<const CompactManifest> manifest)
      : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}
  // The shard of sample `index` (checked), loaded if need be, its number and the sample's position in it.
  Status Find(uint64_t index, std::shared_ptr<const ShardIndex>* shard, size_t* number, size_t* local) const;

  ShardLocator locator_;
  uint64_t chunk_samples_ = 0;  // 0: plain .npy shards
  std::unique_ptr<ShardIndexCache<ShardIndex>> shards_;
};

}  // namespace shardpack
