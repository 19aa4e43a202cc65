// ShardedDatasetWriter: what every format that writes a sequence of shards shares: the roll-over
// rule, the list of published shards, the sticky status, Finish() and Abandon(). A format supplies
// four hooks for one shard (open, size so far, close and publish, discard) and its Add().
#pragma once

#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "shardpack/env.h"

namespace shardpack {

// What every sharded format's writer is told.
struct ShardOptions {
  std::string dir;                          // the dataset folder; must exist
  std::string prefix = "shard";             // shard file names start "<prefix>-000000"
  uint64_t shard_size_bytes = 512'000'000;  // a shard is closed before it would exceed this
  uint64_t samples_per_shard = 100'000;     // ... or once it holds this many samples
  bool sync = true;                         // fsync each file before renaming it into place
  // The pack may re-encode images (pack --max-side, --lossless-as-jpeg): sample tables record each
  // image's original size (version 2, ground/sample_table.h).
  bool original_sizes = false;
};

class ShardedDatasetWriter : public DatasetWriter {
 public:
  Status Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) final;
  // Discards the open shard's temporary file; published shards stay.
  void Abandon() final;
  Status status() const final { return status_; }
  const std::vector<ShardEntry>& published() const final { return finished_; }
  Status ResumeAfter(const std::vector<ShardEntry>& shards) final;
  Status SetShardRange(uint64_t first, uint64_t end) final;
  uint64_t samples_written() const final { return samples_written_; }
  uint64_t bytes_written() const final { return finished_bytes_ + (open_ ? OpenShardBytes() : 0); }

 protected:
  // A shard is closed before a sample that would take it past max_bytes, or once it holds
  // max_samples samples; every shard holds at least one sample.
  ShardedDatasetWriter(Env* env, const ShardOptions& options);

  // For Add(): makes sure a shard that can take a sample of `bytes` bytes is open. Sticky on error.
  Status MakeRoomFor(uint64_t bytes);
  // For Add(): counts a sample written to the open shard.
  void CountSample() {
    ++shard_samples_;
    ++samples_written_;
  }
  // For Add(): records an error; later calls return it.
  Status Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
    return status_;
  }
  uint64_t shard_index() const { return first_shard_ + finished_.size(); }  // the open shard's number

  virtual Status OpenShard(uint64_t index) = 0;
  // Bytes the open shard will have once closed, so far.
  virtual uint64_t OpenShardBytes() const = 0;
  // Completes the open shard, publishes it under its final name and describes it.
  virtual Status CloseShard(ShardEntry* entry) = 0;
  virtual void DiscardShard() = 0;

  Env* const env_;
  const std::string dir_;
  const bool sync_;

 private:
  Status CloseOpenShard();

  const uint64_t max_bytes_;
  const uint64_t max_samples_;
  Status status_;
  bool open_ = false;
  uint64_t shard_samples_ = 0;
  uint64_t samples_written_ = 0;
  uint64_t finished_bytes_ = 0;
  std::vector<ShardEntry> finished_;
  uint64_t first_shard_ = 0;  // SetShardRange: shard numbers lie in [first_shard_, end_shard_)
  uint64_t end_shard_ = UINT64_MAX;
};

}  // namespace shardpack
