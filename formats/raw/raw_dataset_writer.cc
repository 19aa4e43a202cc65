#include "formats/raw/raw_dataset_writer.h"

#include <zstd.h>

#include <nlohmann/json.hpp>

#include "formats/raw/raw_format.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "ground/side_file.h"

namespace shardpack {

RawDatasetWriter::RawDatasetWriter(Env* env, RawWriterOptions options)
    : ShardedDatasetWriter(env, options), options_(std::move(options)), masks_(env, options_.dir, options_.sync) {}

RawDatasetWriter::~RawDatasetWriter() { Abandon(); }

Status RawDatasetWriter::Add(const Sample& sample) {
  if (!status().ok()) return status();
  if (sample.pixels == nullptr) return Fail(Status::InvalidArgument("raw format needs decoded pixels"));
  const DecodedImage& px = *sample.pixels;
  if (!options_.keep_size && (px.width != options_.width || px.height != options_.height)) {
    return Fail(Status::InvalidArgument("image of " + std::to_string(px.width) + "x" + std::to_string(px.height) +
                                        " does not match the shard's " + std::to_string(options_.width) + "x" +
                                        std::to_string(options_.height)));
  }
  // Each text field as a JSON string of its bytes (pack checked that text is UTF-8 and JSON
  // parses), so that reading it back gives the very bytes packed. Image fields (masks) arrive as
  // Sample::masks, already cut.
  nlohmann::json fields = nlohmann::json::object();
  if (sample.fields != nullptr) {
    for (const SampleField& f : *sample.fields) {
      if (!IsImageFieldKind(FieldKind(f.name))) fields[f.name] = f.data;
    }
  }
  std::string fields_line;
  try {
    fields_line = fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict) + "\n";
  } catch (const nlohmann::json::exception&) {
    return Fail(Status::InvalidArgument("a text field of sample " + std::string(sample.key) + " is not UTF-8"));
  }
  const uint64_t size = px.rgb.size();
  SHARDPACK_RETURN_IF_ERROR(MakeRoomFor(size));
  const std::string_view bytes(reinterpret_cast<const char*>(px.rgb.data()), size);
  SampleRecord record;
  record.key = std::string(sample.key);
  record.offset = shard_bytes_;
  record.size = size;
  record.xxh64 = Xxh64(bytes);
  record.label = sample.label;
  record.format = sample.image.format;
  record.width = px.width;
  record.height = px.height;
  Status s;
  if (compressed()) {
    chunk_.append(bytes);
    if (++chunk_count_ == options_.zstd_chunk_samples) s = FlushChunk();
  } else {
    s = file_->Append(bytes);
  }
  if (!s.ok()) return Fail(s);
  s = masks_.Add(sample.masks, px.width, px.height);
  if (!s.ok()) return Fail(s);
  if (options_.keep_size) {
    offsets_.push_back(static_cast<int64_t>(shard_bytes_ - (compressed() ? 0 : kNpyHeaderBytes)));
    shapes_.insert(shapes_.end(), {static_cast<int32_t>(px.height), static_cast<int32_t>(px.width), 3});
  }
  shard_bytes_ += size;
  labels_.push_back(sample.label);
  keys_ += record.key + "\n";
  sample_table_ += FormatSampleRecord(record);
  fields_jsonl_ += fields_line;
  has_text_fields_ = has_text_fields_ || !fields.empty();
  for (const auto& item : fields.items()) ++field_counts_[item.key()];
  if (sample.masks != nullptr) {
    for (const SampleMask& m : *sample.masks) ++field_counts_[m.name];
  }
  CountSample();
  return Status::OK();
}

uint64_t RawDatasetWriter::OpenShardBytes() const { return shard_bytes_; }

Status RawDatasetWriter::OpenShard(uint64_t index) {
  shard_file_ = RawShardFileName(options_.prefix, index, compressed());
  SHARDPACK_RETURN_IF_ERROR(env_->NewWritableFile(JoinPath(dir_, shard_file_ + ".tmp"), &file_));
  // Offsets in a compressed shard refer to the decompressed pixel data, which has no header.
  // Otherwise a placeholder header; FinishShard() writes the real one of the same length.
  shard_bytes_ = compressed() ? 0 : kNpyHeaderBytes;
  if (!compressed()) {
    Status s = file_->Append(std::string(kNpyHeaderBytes, ' '));
    if (!s.ok()) {
      DiscardShard();  // not open yet as far as Abandon() knows: remove the temporary file here
      return s;
    }
  }
  chunk_.clear();
  chunk_count_ = 0;
  file_bytes_ = 0;
  chunk_offsets_.assign(1, 0);
  labels_.clear();
  keys_.clear();
  offsets_.clear();
  shapes_.clear();
  sample_table_ = kSampleTableHeader;
  fields_jsonl_.clear();
  has_text_fields_ = false;
  field_counts_.clear();
  masks_.Start(shard_file_, !options_.keep_size, options_.height, options_.width);
  return Status::OK();
}

Status RawDatasetWriter::Publish(const std::string& suffix, const std::string& contents, ShardEntry* entry) {
  SideFile side;
  SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, dir_, RawSideFileName(shard_file_, suffix), contents, sync_, &side));
  entry->side_files.push_back(side);
  return Status::OK();
}

// Compresses the gathered images as one zstd frame and appends it.
Status RawDatasetWriter::FlushChunk() {
  if (chunk_count_ == 0) return Status::OK();
  std::string frame(ZSTD_compressBound(chunk_.size()), '\0');
  const size_t n = ZSTD_compress(frame.data(), frame.size(), chunk_.data(), chunk_.size(), options_.zstd_level);
  if (ZSTD_isError(n)) return Status::IOError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  frame.resize(n);
  SHARDPACK_RETURN_IF_ERROR(file_->Append(frame));
  file_bytes_ += n;
  chunk_offsets_.push_back(static_cast<int64_t>(file_bytes_));
  chunk_.clear();
  chunk_count_ = 0;
  return Status::OK();
}

Status RawDatasetWriter::CloseShard(ShardEntry* out) {
  const uint64_t n = labels_.size();
  const uint64_t data_bytes = shard_bytes_ - (compressed() ? 0 : kNpyHeaderBytes);
  if (compressed()) {
    SHARDPACK_RETURN_IF_ERROR(FlushChunk());
  } else {
    const std::string header =
        options_.keep_size ? NpyHeader("|u1", {data_bytes}) : NpyHeader("|u1", {n, options_.height, options_.width, 3});
    SHARDPACK_RETURN_IF_ERROR(file_->WriteAt(0, header));
  }
  if (sync_) SHARDPACK_RETURN_IF_ERROR(file_->Sync());
  SHARDPACK_RETURN_IF_ERROR(file_->Close());
  file_.reset();

  ShardEntry entry;
  entry.file = shard_file_;
  entry.samples = n;
  const std::string tmp = JoinPath(dir_, shard_file_ + ".tmp");
  uint64_t checksum = 0;
  // The header changed after the data was written, so the checksum is taken from the file.
  SHARDPACK_RETURN_IF_ERROR(ChecksumFile(env_, tmp, &checksum, &entry.bytes));
  entry.xxh64 = ChecksumHex(checksum);
  SHARDPACK_RETURN_IF_ERROR(Publish(".labels.npy", NpyHeader("<i4", {n}) + NpyInt32Body(labels_), &entry));
  SHARDPACK_RETURN_IF_ERROR(Publish(".keys.txt", keys_, &entry));
  if (has_text_fields_) SHARDPACK_RETURN_IF_ERROR(Publish(".fields.jsonl", fields_jsonl_, &entry));
  SHARDPACK_RETURN_IF_ERROR(masks_.Publish(&entry.side_files));
  entry.fields = field_counts_;
  if (compressed()) {
    const uint64_t chunks = chunk_offsets_.size();
    SHARDPACK_RETURN_IF_ERROR(
        Publish(".chunks.npy", NpyHeader("<i8", {chunks}) + NpyInt64Body(chunk_offsets_), &entry));
  }
  if (options_.keep_size) {
    offsets_.push_back(static_cast<int64_t>(data_bytes));
    SHARDPACK_RETURN_IF_ERROR(Publish(".offsets.npy", NpyHeader("<i8", {n + 1}) + NpyInt64Body(offsets_), &entry));
    SHARDPACK_RETURN_IF_ERROR(Publish(".shapes.npy", NpyHeader("<i4", {n, 3}) + NpyInt32Body(shapes_), &entry));
  }
  SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, dir_, RawSideFileName(shard_file_, ".samples.tsv"), sample_table_,
                                            sync_, &entry.sample_table));
  SHARDPACK_RETURN_IF_ERROR(env_->RenameFile(tmp, JoinPath(dir_, shard_file_)));
  shard_bytes_ = 0;
  *out = std::move(entry);
  return Status::OK();
}

void RawDatasetWriter::DiscardShard() {
  (void)file_->Close();
  file_.reset();
  (void)env_->RemoveFile(JoinPath(dir_, shard_file_ + ".tmp"));
  masks_.Discard();
}

}  // namespace shardpack
