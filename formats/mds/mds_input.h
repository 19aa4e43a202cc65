// MdsInput: an MDS dataset as convert's input. Shards are read whole, in order (a compressed one
// decompressed once), their samples in order; a sample keeps its place as its key (IndexKey, as
// the in-place reader names it), so that a converted dataset and the MDS folder agree key for key.
// A "pil" image is written as a PNG of its pixels (lossless). A damaged sample is skipped and
// reported naming the shard file and the sample (shard.00000.mds#12); a shard whose file or header
// is damaged is skipped whole with one line.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/pack_input.h"
#include "formats/mds/mds_dataset.h"
#include "formats/mds/mds_shard_file.h"
#include "shardpack/env.h"

namespace shardpack {

class MdsInput final : public PackInput {
 public:
  static Status Open(Env* env, const std::string& dir, uint64_t max_member_bytes, std::unique_ptr<PackInput>* input);

  const std::vector<std::string>& class_names() const override { return classes_; }
  uint64_t expected() const override { return dataset_.index.samples; }
  void KeepFields(bool keep) override { keep_fields_ = keep; }
  Status Next(PackItem* item, bool* done) override;

 private:
  MdsInput(Env* env, MdsDataset dataset, uint64_t max_member_bytes)
      : env_(env), dataset_(std::move(dataset)), max_member_bytes_(max_member_bytes) {}
  void Emit(std::string_view sample, PackItem* item);

  Env* env_;
  MdsDataset dataset_;
  uint64_t max_member_bytes_;
  std::vector<std::string> classes_;  // none: labels are numbers
  bool keep_fields_ = false;
  size_t shard_ = 0;     // the shard being read
  bool loaded_ = false;  // raw_ and view_ hold it
  WholeFile bytes_;
  MdsShardView view_;
  uint64_t local_ = 0;     // its next sample
  uint64_t position_ = 0;  // the next sample's place in the dataset
};

}  // namespace shardpack
