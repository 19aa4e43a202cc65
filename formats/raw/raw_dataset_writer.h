// RawDatasetWriter: writes pre-decoded pixels into .npy shards, or zstd-compressed chunked shards
// (raw_format.h).
//
// Samples arrive decoded and transformed (Sample::pixels). A shard is written as "<name>.tmp" with a
// placeholder header, which is rewritten with the final sample count when the shard completes; then
// its side files are published and the shard renamed into place. Roll-over as for WebDataset: before
// a sample that would push the shard past shard_size_bytes, or once it holds samples_per_shard.
// Text fields (Sample::fields of kind txt and json) go into a JSON Lines side file, a line per
// sample; label masks (Sample::masks, cut by the pipeline as the image was) into a pixel array per
// field (RawMaskArrays).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "formats/common/sharded_dataset_writer.h"
#include "formats/raw/raw_mask_arrays.h"
#include "ground/sample_table.h"
#include "shardpack/env.h"

namespace shardpack {

struct RawWriterOptions : ShardOptions {
  bool keep_size = false;  // variable-size images with offsets; else every image is height x width
  uint32_t height = 0;
  uint32_t width = 0;
  // 0: plain .npy shards. Else "<stem>.zst" shards: the pixel data cut into chunks of this many
  // images, each chunk one zstd frame, with "<stem>.chunks.npy" giving the frames' offsets.
  uint32_t zstd_chunk_samples = 0;
  int zstd_level = 3;
};

class RawDatasetWriter final : public ShardedDatasetWriter {
 public:
  RawDatasetWriter(Env* env, RawWriterOptions options);
  ~RawDatasetWriter() override;

  // InvalidArgument when the sample carries no pixels, or pixels of the wrong size.
  Status Add(const Sample& sample) override;

 private:
  Status OpenShard(uint64_t index) override;
  uint64_t OpenShardBytes() const override;
  Status CloseShard(ShardEntry* entry) override;
  void DiscardShard() override;
  Status Publish(const std::string& suffix, const std::string& contents, ShardEntry* entry);
  Status FlushChunk();
  bool compressed() const { return options_.zstd_chunk_samples > 0; }

  RawWriterOptions options_;

  // The open shard (file_ is null between shards).
  std::unique_ptr<WritableFile> file_;
  std::string shard_file_;
  uint64_t shard_bytes_ = 0;  // header included
  std::vector<int32_t> labels_;
  std::string keys_;
  std::vector<int64_t> offsets_;  // keep_size: byte offsets of each image, relative to the data
  std::vector<int32_t> shapes_;   // keep_size: height, width, 3 per image
  std::string sample_table_;
  // Text fields: one JSON object a sample ({} without), published as "<stem>.fields.jsonl" when
  // any sample of the shard has one, so that datasets without fields stay as they were.
  std::string fields_jsonl_;
  bool has_text_fields_ = false;
  std::map<std::string, uint64_t> field_counts_;  // text fields and masks
  RawMaskArrays masks_;
  // Compressed shards: pixels of the chunk being gathered, and where each written frame starts.
  std::string chunk_;
  uint32_t chunk_count_ = 0;
  uint64_t file_bytes_ = 0;
  std::vector<int64_t> chunk_offsets_;
};

}  // namespace shardpack
