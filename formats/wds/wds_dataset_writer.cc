#include "formats/wds/wds_dataset_writer.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "formats/wds/tar_format.h"
#include "lib/side_file.h"

namespace shardpack {
namespace {

struct PendingMember {
  std::string name;
  std::string ext;
  std::string_view data;
};

}  // namespace

std::string WdsShardFileName(const std::string& prefix, uint64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%06llu.tar", static_cast<unsigned long long>(index));
  return prefix + buf;
}

std::string WdsIndexFileName(const std::string& shard_file) {
  return shard_file.substr(0, shard_file.size() - 4) + ".idx";
}

std::string WdsSampleTableFileName(const std::string& shard_file) {
  return shard_file.substr(0, shard_file.size() - 4) + ".samples.tsv";
}

WdsDatasetWriter::WdsDatasetWriter(Env* env, WdsWriterOptions options)
    : env_(env), options_(std::move(options)) {}

WdsDatasetWriter::~WdsDatasetWriter() {
  if (tar_) Abandon();
}

uint64_t WdsDatasetWriter::bytes_written() const {
  return finished_bytes_ + (tar_ ? tar_->size() : 0);
}

Status WdsDatasetWriter::Add(const Sample& sample) {
  if (!status_.ok()) return status_;
  const std::string key(sample.key);
  nlohmann::json meta = {{"path", sample.relpath},
                         {"width", sample.image.width},
                         {"height", sample.image.height},
                         {"format", ImageFormatName(sample.image.format)}};
  meta["class"] = sample.class_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(sample.class_name);
  if (sample.extra != nullptr) meta["source"] = *sample.extra;
  const std::string json = meta.dump();
  const std::string label = std::to_string(sample.label);

  std::vector<PendingMember> members;
  if (sample.label >= 0) members.push_back({key + ".cls", "cls", label});
  const std::string image_ext = ImageExtension(sample.image.format);
  members.push_back({key + "." + image_ext, image_ext, sample.bytes});
  members.push_back({key + ".json", "json", json});
  std::sort(members.begin(), members.end(),
            [](const PendingMember& a, const PendingMember& b) { return a.name < b.name; });

  uint64_t sample_bytes = 0;
  for (const PendingMember& m : members) sample_bytes += tar::MemberBytes(m.data.size());
  if (tar_ && shard_samples_ > 0 &&
      (shard_samples_ >= options_.samples_per_shard ||
       tar_->size() + sample_bytes + tar::kEndOfArchiveBytes > options_.shard_size_bytes)) {
    status_ = FinishShard();
    if (!status_.ok()) return status_;
  }
  if (!tar_) {
    status_ = StartShard();
    if (!status_.ok()) return status_;
  }

  SampleRecord record;
  record.key = key;
  record.offset = tar_->size();
  record.label = sample.label;
  record.format = sample.image.format;
  record.width = sample.image.width;
  record.height = sample.image.height;
  tar_->BeginRange();
  DaliIndexSample index_entry;
  for (const PendingMember& m : members) {
    uint64_t offset = 0;
    status_ = tar_->AddMember(m.name, m.data, &offset);
    if (!status_.ok()) return status_;
    index_entry.push_back({m.ext, offset, m.data.size(), m.name});
  }
  record.size = tar_->size() - record.offset;
  record.xxh64 = tar_->range_checksum();
  index_.AddSample(index_entry);
  sample_table_ += FormatSampleRecord(record);
  ++shard_samples_;
  ++samples_written_;
  return Status::OK();
}

Status WdsDatasetWriter::StartShard() {
  shard_file_ = WdsShardFileName(options_.prefix, finished_.size());
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env_->NewWritableFile(JoinPath(options_.dir, shard_file_ + ".tmp"), &file));
  tar_ = std::make_unique<TarShardWriter>(std::move(file));
  shard_samples_ = 0;
  index_ = DaliIndexBuilder();
  sample_table_ = kSampleTableHeader;
  return Status::OK();
}

// Publishes the side files first and the shard last, so a shard under its final name always has
// complete side files next to it.
Status WdsDatasetWriter::FinishShard() {
  ShardEntry entry;
  entry.file = shard_file_;
  entry.samples = shard_samples_;
  SHARDPACK_RETURN_IF_ERROR(tar_->Finish(options_.sync));
  entry.bytes = tar_->size();
  entry.xxh64 = ChecksumHex(tar_->checksum());
  SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, options_.dir, WdsIndexFileName(shard_file_), index_.Contents(), options_.sync, &entry.index));
  SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, options_.dir, WdsSampleTableFileName(shard_file_), sample_table_, options_.sync, &entry.sample_table));
  const std::string path = JoinPath(options_.dir, shard_file_);
  SHARDPACK_RETURN_IF_ERROR(env_->RenameFile(path + ".tmp", path));
  tar_.reset();
  finished_bytes_ += entry.bytes;
  finished_.push_back(std::move(entry));
  return Status::OK();
}

Status WdsDatasetWriter::Finish(const nlohmann::json& /*dataset_info*/, std::vector<ShardEntry>* shards) {
  if (!status_.ok()) return status_;
  if (tar_) {
    status_ = FinishShard();
    if (!status_.ok()) return status_;
  }
  if (options_.sync) {
    status_ = env_->SyncDir(options_.dir);
    if (!status_.ok()) return status_;
  }
  *shards = finished_;
  return Status::OK();
}

void WdsDatasetWriter::Abandon() {
  if (!tar_) return;
  (void)tar_->Finish(false);
  tar_.reset();
  (void)env_->RemoveFile(JoinPath(options_.dir, shard_file_ + ".tmp"));
}

}  // namespace shardpack
