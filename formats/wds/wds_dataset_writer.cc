#include "formats/wds/wds_dataset_writer.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "formats/common/sample_metadata.h"
#include "formats/wds/tar_format.h"
#include "formats/wds/wds_naming.h"
#include "ground/side_file.h"

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
    : ShardedDatasetWriter(env, options), options_(std::move(options)) {}

WdsDatasetWriter::~WdsDatasetWriter() { Abandon(); }

Status WdsDatasetWriter::Add(const Sample& sample) {
  if (!status().ok()) return status();
  const std::string key(sample.key);
  const std::string json = SampleMetadata(sample).dump();
  const std::string label = std::to_string(sample.label);

  std::vector<PendingMember> members;
  if (sample.label >= 0) members.push_back({key + ".cls", "cls", label});
  const std::string image_ext = ImageExtension(sample.image.format);
  members.push_back({key + "." + image_ext, image_ext, sample.bytes});
  // The metadata member is "json" unless the sample's own files claim that name.
  const bool has_json_field =
      sample.fields != nullptr &&
      std::any_of(sample.fields->begin(), sample.fields->end(), [](const SampleField& f) { return f.name == "json"; });
  const std::string meta_ext = has_json_field ? kWdsMetaJsonField : "json";
  members.push_back({key + "." + meta_ext, meta_ext, json});
  if (sample.fields != nullptr) {
    for (const SampleField& f : *sample.fields) members.push_back({key + "." + f.name, f.name, f.data});
  }
  std::sort(members.begin(), members.end(),
            [](const PendingMember& a, const PendingMember& b) { return a.name < b.name; });

  uint64_t sample_bytes = 0;
  for (const PendingMember& m : members) sample_bytes += tar::MemberBytes(m.data.size());
  SHARDPACK_RETURN_IF_ERROR(MakeRoomFor(sample_bytes));

  SampleRecord record;
  record.key = key;
  record.offset = tar_->size();
  record.label = sample.label;
  record.format = sample.image.format;
  record.width = sample.image.width;
  record.height = sample.image.height;
  record.original_width = sample.original.width;
  record.original_height = sample.original.height;
  record.orientation = uint8_t(sample.orientation);
  tar_->BeginRange();
  DaliIndexSample index_entry;
  for (const PendingMember& m : members) {
    uint64_t offset = 0;
    Status s = tar_->AddMember(m.name, m.data, &offset);
    if (!s.ok()) return Fail(s);
    index_entry.push_back({m.ext, offset, m.data.size(), m.name});
  }
  record.size = tar_->size() - record.offset;
  record.xxh64 = tar_->range_checksum();
  index_.AddSample(index_entry);
  if (sample.fields != nullptr) {
    for (const SampleField& f : *sample.fields) ++field_counts_[f.name];
  }
  sample_records_.push_back(std::move(record));
  CountSample();
  return Status::OK();
}

uint64_t WdsDatasetWriter::OpenShardBytes() const { return tar_->size() + tar::kEndOfArchiveBytes; }

Status WdsDatasetWriter::OpenShard(uint64_t index) {
  shard_file_ = WdsShardFileName(options_.prefix, index);
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env_->NewWritableFile(JoinPath(dir_, shard_file_ + ".tmp"), &file));
  tar_ = std::make_unique<TarShardWriter>(std::move(file));
  index_ = DaliIndexBuilder();
  sample_records_.clear();
  field_counts_.clear();
  return Status::OK();
}

// Publishes the side files first and the shard last, so a shard under its final name always has
// complete side files next to it.
Status WdsDatasetWriter::CloseShard(ShardEntry* entry) {
  entry->file = shard_file_;
  entry->samples = index_.samples();
  entry->fields = field_counts_;
  SHARDPACK_RETURN_IF_ERROR(tar_->Finish(sync_));
  entry->bytes = tar_->size();
  entry->xxh64 = ChecksumHex(tar_->checksum());
  SHARDPACK_RETURN_IF_ERROR(
      PublishSideFile(env_, dir_, WdsIndexFileName(shard_file_), index_.Contents(), sync_, &entry->index));
  SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, dir_, WdsSampleTableFileName(shard_file_),
                                            FormatSampleTable(sample_records_, options_.original_sizes), sync_,
                                            &entry->sample_table));
  const std::string path = JoinPath(dir_, shard_file_);
  SHARDPACK_RETURN_IF_ERROR(env_->RenameFile(path + ".tmp", path));
  tar_.reset();
  return Status::OK();
}

void WdsDatasetWriter::DiscardShard() {
  (void)tar_->Finish(false);
  tar_.reset();
  (void)env_->RemoveFile(JoinPath(dir_, shard_file_ + ".tmp"));
}

}  // namespace shardpack
