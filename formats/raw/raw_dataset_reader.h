// Random access to the images of a raw dataset: one pread for a plain shard; for a zstd shard, its
// chunk is read and decompressed (the cost of random access that docs/formats/raw.md states). Text
// fields: a line of the shard's fields side file. Masks: a slot of the shard's mask array.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/shard_locator.h"
#include "ground/sample_table.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class RawDatasetReader final : public DatasetReader {
 public:
  static Status Open(Env* env, const std::string& dir, Manifest manifest, std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;
  // Text fields from the shard's "<stem>.fields.jsonl": one pread of the sample's line.
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  // Label masks from the shard's "<stem>.<name>.npy": one pread of the sample's slot.
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override;

 private:
  explicit RawDatasetReader(Manifest manifest)
      : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}

  ShardLocator locator_;
  uint64_t chunk_samples_ = 0;  // 0: plain .npy shards
  std::vector<std::unique_ptr<RandomAccessFile>> files_;
  std::vector<std::vector<SampleRecord>> tables_;
  std::vector<std::vector<int64_t>> chunks_;  // zstd: frame offsets per shard
  // Per shard: its fields side file (null without one) and where each sample's line starts (N+1).
  std::vector<std::unique_ptr<RandomAccessFile>> field_files_;
  std::vector<std::vector<uint64_t>> field_lines_;
  // Per shard: its mask arrays by field, each with its presence bytes (one a sample).
  struct MaskArray {
    std::unique_ptr<RandomAccessFile> file;
    std::string present;
  };
  std::vector<std::map<std::string, MaskArray>> masks_;
};

}  // namespace shardpack
