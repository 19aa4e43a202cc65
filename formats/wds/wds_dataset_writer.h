// WdsDatasetWriter: writes WebDataset tar shards with their DALI index and sample table.
//
// Each sample becomes adjacent members "<key>.cls" (labelled datasets only), "<key>.<image ext>"
// holding the original bytes, "<key>.<field>" for each of its other files (a caption "txt", a
// mask "seg.png"), and shardpack's metadata "<key>.json", in name order (as `tar --sort=name` would
// write them). A sample whose own files include "json" (annotations) keeps that name for them, and
// its metadata moves to "<key>.meta.json" (docs/formats/wds.md). A shard is written as "<name>.tmp" and renamed to its
// final name once complete, after its index and sample table; a new shard starts when the next sample would push the
// current one past shard_size_bytes or it holds samples_per_shard samples.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "formats/common/sharded_dataset_writer.h"
#include "formats/wds/dali_index.h"
#include "formats/wds/tar_shard_writer.h"
#include "ground/sample_table.h"
#include "shardpack/env.h"

namespace shardpack {

// Shards are "<prefix>-000000.tar", ...
using WdsWriterOptions = ShardOptions;

// The three file names of shard `index`: "<prefix>-NNNNNN.tar", ".idx", ".samples.tsv".
std::string WdsShardFileName(const std::string& prefix, uint64_t index);
std::string WdsIndexFileName(const std::string& shard_file);
std::string WdsSampleTableFileName(const std::string& shard_file);

class WdsDatasetWriter final : public ShardedDatasetWriter {
 public:
  WdsDatasetWriter(Env* env, WdsWriterOptions options);
  ~WdsDatasetWriter() override;

  Status Add(const Sample& sample) override;

 private:
  Status OpenShard(uint64_t index) override;
  uint64_t OpenShardBytes() const override;
  Status CloseShard(ShardEntry* entry) override;
  void DiscardShard() override;

  WdsWriterOptions options_;
  // The open shard (tar_ is null between shards).
  std::unique_ptr<TarShardWriter> tar_;
  std::string shard_file_;
  DaliIndexBuilder index_;
  // The open shard's sample table, written when it closes (its version depends on the records:
  // FormatSampleTable).
  std::vector<SampleRecord> sample_records_;
  std::map<std::string, uint64_t> field_counts_;  // of the open shard
};

}  // namespace shardpack
