#include "formats/common/sharded_dataset_writer.h"

namespace shardpack {

ShardedDatasetWriter::ShardedDatasetWriter(Env* env, const ShardOptions& options)
    : env_(env),
      dir_(options.dir),
      sync_(options.sync),
      max_bytes_(options.shard_size_bytes),
      max_samples_(options.samples_per_shard) {}

Status ShardedDatasetWriter::CloseOpenShard() {
  ShardEntry entry;
  SHARDPACK_RETURN_IF_ERROR(CloseShard(&entry));
  open_ = false;
  finished_bytes_ += entry.bytes;
  finished_.push_back(std::move(entry));
  return Status::OK();
}

Status ShardedDatasetWriter::MakeRoomFor(uint64_t bytes) {
  if (!status_.ok()) return status_;
  if (open_ && shard_samples_ > 0 && (shard_samples_ >= max_samples_ || OpenShardBytes() + bytes > max_bytes_)) {
    status_ = CloseOpenShard();
    if (!status_.ok()) return status_;
  }
  if (!open_) {
    if (shard_index() >= end_shard_) {
      status_ = Status::InvalidArgument(
          "this part needs more shards than its " + std::to_string(end_shard_ - first_shard_) +
          " shard numbers (from " + std::to_string(first_shard_) +
          "): a shard was cut by --shard-size before --samples-per-shard samples; a partitioned pack needs shards "
          "cut by count: raise --shard-size or lower --samples-per-shard");
      return status_;
    }
    status_ = OpenShard(shard_index());
    if (!status_.ok()) return status_;
    open_ = true;
    shard_samples_ = 0;
  }
  return Status::OK();
}

Status ShardedDatasetWriter::Finish(const nlohmann::json& /*dataset_info*/, std::vector<ShardEntry>* shards) {
  if (!status_.ok()) return status_;
  if (open_) {
    status_ = CloseOpenShard();
    if (!status_.ok()) return status_;
  }
  if (sync_) {
    status_ = env_->SyncDir(dir_);
    if (!status_.ok()) return status_;
  }
  *shards = finished_;
  return Status::OK();
}

Status ShardedDatasetWriter::ResumeAfter(const std::vector<ShardEntry>& shards) {
  if (open_ || !finished_.empty()) return Status::InvalidArgument("ResumeAfter must come before the first Add");
  finished_ = shards;
  for (const ShardEntry& e : shards) {
    finished_bytes_ += e.bytes;
    samples_written_ += e.samples;
  }
  return Status::OK();
}

Status ShardedDatasetWriter::SetShardRange(uint64_t first, uint64_t end) {
  if (open_ || !finished_.empty()) return Status::InvalidArgument("SetShardRange must come before the first Add");
  first_shard_ = first;
  end_shard_ = end;
  return Status::OK();
}

void ShardedDatasetWriter::Abandon() {
  if (!open_) return;
  DiscardShard();
  open_ = false;
}

}  // namespace shardpack
