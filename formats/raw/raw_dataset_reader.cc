#include "formats/raw/raw_dataset_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "formats/common/shard_file.h"
#include "formats/raw/raw_format.h"
#include "ground/line_file.h"
#include "ground/manifest_json.h"
#include "ground/packed_keys.h"
#include "ground/side_file.h"

namespace shardpack {

namespace {

// The shard's fields side file, checked against its manifest checksum, kept open as a LineFile (a
// line a sample, read when asked for), not its text: a dataset's captions need not fit in memory.
// Nothing when the shard has no such file.
Status OpenFieldsFile(Env* env, const std::string& dir, const ShardEntry& shard, std::unique_ptr<LineFile>* file) {
  const std::string name = RawSideFileName(shard.file, ".fields.jsonl");
  const auto side =
      std::find_if(shard.side_files.begin(), shard.side_files.end(), [&](const SideFile& f) { return f.file == name; });
  if (side == shard.side_files.end()) return Status::OK();
  SHARDPACK_RETURN_IF_ERROR(LineFile::Open(env, dir, *side, /*header=*/nullptr, file));
  if ((*file)->lines() != shard.samples || !(*file)->ends_with_newline()) {
    return Status::DataLoss(JoinPath(dir, name) + " has " + std::to_string((*file)->lines()) + " lines for " +
                            std::to_string(shard.samples) + " samples (run shardpack verify)");
  }
  return Status::OK();
}

// The shard's mask arrays (raw_format.h): each presence file, checked against its manifest
// checksum, and its array opened after checking that it holds a slot for every sample
// (`pixels`: the shard's pixel count, its images' width x height added up).
template <typename MaskArray>
Status OpenMaskArrays(Env* env, const std::string& dir, const ShardEntry& shard, uint64_t pixels,
                      std::map<std::string, MaskArray>* masks) {
  for (const SideFile& side : shard.side_files) {
    std::string field;
    if (ParseRawMaskFileName(shard.file, side.file, &field) != RawMaskFile::kPresence) continue;
    std::string text;
    SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, side, &text));
    NpyInfo info;
    const Status s = ParseNpyHeader(text, &info);
    if (!s.ok() || info.descr != "|u1" || info.shape != std::vector<uint64_t>{shard.samples} ||
        text.size() != info.data_offset + shard.samples) {
      return Status::DataLoss(JoinPath(dir, side.file) + " is not a uint8 array of " + std::to_string(shard.samples) +
                              " presence flags (run shardpack verify)");
    }
    const std::string array = JoinPath(dir, RawMaskFileName(shard.file, field));
    uint64_t size = 0;
    SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(array, &size));
    if (size != kNpyHeaderBytes + pixels) {
      return Status::DataLoss(array + " has " + std::to_string(size) + " bytes, not the " +
                              std::to_string(kNpyHeaderBytes + pixels) + " its " + std::to_string(shard.samples) +
                              " masks need (run shardpack verify)");
    }
    MaskArray& m = (*masks)[field];
    m.present = text.substr(info.data_offset);
    SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(array, &m.file));
  }
  return Status::OK();
}

}  // namespace

// Per shard: the pixel file, the sample table (fixed-width records, keys back to back), the zstd
// chunk offsets, the fields file with where each sample's line starts, and the mask arrays.
struct RawDatasetReader::ShardIndex {
  struct Sample {
    uint64_t offset = 0, size = 0;
    uint32_t width = 0, height = 0;
    int32_t label = -1;
    ImageFormat format = ImageFormat::kUnknown;
  };
  std::unique_ptr<RandomAccessFile> file;
  std::vector<Sample> samples;
  // The samples' XXH64s from the sample table, kept only when the pixel file's reads go to a
  // server (RandomAccessFile::reads_are_requests): nothing on this machine checked that shard.
  std::vector<uint64_t> checksums;
  PackedKeys keys;
  std::vector<int64_t> chunks;       // zstd: frame offsets
  std::unique_ptr<LineFile> fields;  // null without a fields side file
  struct MaskArray {
    std::unique_ptr<RandomAccessFile> file;
    std::string present;  // a byte a sample
  };
  std::map<std::string, MaskArray> masks;

  uint64_t memory_bytes() const {
    uint64_t bytes = sizeof(*this) + samples.capacity() * sizeof(Sample) + checksums.capacity() * 8 +
                     keys.memory_bytes() + chunks.capacity() * sizeof(int64_t) + (fields ? fields->memory_bytes() : 0);
    for (const auto& [name, mask] : masks) bytes += name.capacity() + mask.present.capacity() + sizeof(mask);
    return bytes;
  }
};

namespace {

using ShardIndex = RawDatasetReader::ShardIndex;

Status LoadRawShard(Env* env, const std::string& dir, const ShardEntry& shard, uint64_t chunk_samples,
                    std::unique_ptr<ShardIndex>* loaded) {
  OpenedShard opened;
  SHARDPACK_RETURN_IF_ERROR(OpenShardWithTable(env, dir, shard, &opened));
  const uint64_t shard_bytes = opened.bytes;
  auto index = std::make_unique<ShardIndex>();
  if (chunk_samples > 0) {
    const std::string name = RawSideFileName(shard.file, ".chunks.npy");
    const auto side = std::find_if(shard.side_files.begin(), shard.side_files.end(),
                                   [&](const SideFile& f) { return f.file == name; });
    if (side == shard.side_files.end()) {
      return Status::DataLoss(JoinPath(dir, kManifestFileName) + " lists no " + name + " for " + shard.file);
    }
    std::string text;
    SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, *side, &text));
    const Status s = ParseRawChunkIndex(text, shard_bytes, &index->chunks);
    if (!s.ok()) return Status::DataLoss(JoinPath(dir, name) + ": " + s.message());
  }
  // The pixels lie back to back after the .npy header (plain) or from 0 in the decompressed data
  // (zstd), each image height x width x 3 bytes: the only layout pack writes, so any other table
  // would read the wrong bytes.
  uint64_t expected_offset = chunk_samples == 0 ? kNpyHeaderBytes : 0;
  uint64_t pixels = 0;
  index->samples.reserve(opened.table.size());
  index->keys.Reserve(opened.table.size());
  for (const SampleRecord& rec : opened.table) {
    pixels += uint64_t(rec.width) * rec.height;
    if (rec.size != uint64_t(rec.width) * rec.height * 3 || rec.offset != expected_offset) {
      return Status::DataLoss(JoinPath(dir, shard.sample_table.file) + ": sample " + rec.key + " (" +
                              std::to_string(rec.width) + "x" + std::to_string(rec.height) + ") claims " +
                              std::to_string(rec.size) + " bytes at offset " + std::to_string(rec.offset) + ", not " +
                              std::to_string(uint64_t(rec.width) * rec.height * 3) + " at " +
                              std::to_string(expected_offset) + " (run shardpack verify)");
    }
    if (chunk_samples == 0)
      SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, rec.key, rec.offset, rec.size, shard_bytes));
    expected_offset += rec.size;
    index->keys.Add(rec.key);
    index->samples.push_back({rec.offset, rec.size, rec.width, rec.height, rec.label, rec.format});
  }
  SHARDPACK_RETURN_IF_ERROR(OpenFieldsFile(env, dir, shard, &index->fields));
  SHARDPACK_RETURN_IF_ERROR(OpenMaskArrays(env, dir, shard, pixels, &index->masks));
  index->file = std::move(opened.file);
  if (chunk_samples == 0 && index->file->reads_are_requests()) {
    index->checksums.reserve(opened.table.size());
    for (const SampleRecord& rec : opened.table) index->checksums.push_back(rec.xxh64);
  }
  *loaded = std::move(index);
  return Status::OK();
}

}  // namespace

RawDatasetReader::~RawDatasetReader() = default;

Status RawDatasetReader::Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                              uint64_t budget, std::unique_ptr<DatasetReader>* reader) {
  std::unique_ptr<RawDatasetReader> r(new RawDatasetReader(std::move(manifest)));
  nlohmann::json options;
  SHARDPACK_RETURN_IF_ERROR(ManifestOptions(r->manifest(), &options));
  r->chunk_samples_ = options.value("compress", "none") == "zstd" ? options.value("chunk_samples", 0u) : 0;
  const ShardTable* shards = &r->manifest().shards;
  const uint64_t chunk_samples = r->chunk_samples_;
  r->shards_ = std::make_unique<ShardIndexCache<ShardIndex>>(
      shards->size(), budget, [env, dir, shards, chunk_samples](size_t shard, std::unique_ptr<ShardIndex>* loaded) {
        return LoadRawShard(env, dir, shards->entry(shard), chunk_samples, loaded);
      });
  *reader = std::move(r);
  return Status::OK();
}

Status RawDatasetReader::Find(uint64_t index, std::shared_ptr<const ShardIndex>* shard, size_t* number,
                              size_t* local) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  uint64_t l = 0;
  locator_.Locate(index, number, &l);
  *local = size_t(l);
  return shards_->Get(*number, shard);
}

Status RawDatasetReader::Read(uint64_t index, ReadSample* out) const {
  std::shared_ptr<const ShardIndex> shard;
  size_t number = 0, local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &number, &local));
  const ShardIndex::Sample& r = shard->samples[local];
  out->key = shard->keys[local];
  out->label = r.label;
  out->format = r.format;
  out->encoded.clear();
  out->pixels.width = r.width;
  out->pixels.height = r.height;
  out->pixels.rgb.resize(r.size);
  if (chunk_samples_ == 0) {
    char* pixels = reinterpret_cast<char*>(out->pixels.rgb.data());
    if (shard->checksums.empty()) return shard->file->Read(r.offset, r.size, pixels);
    // From a server: checked against the sample table (as the wds reader does).
    return ReadCheckedSample(*shard->file, std::string(manifest().shards.file(number)), out->key, r.offset, r.size,
                             shard->checksums[local], pixels);
  }

  const std::string_view file = manifest().shards.file(number);  // (for messages)
  const std::vector<int64_t>& chunks = shard->chunks;
  const uint64_t c = local / chunk_samples_;
  if (c + 1 >= chunks.size() || chunks[c + 1] < chunks[c]) {
    return Status::DataLoss(std::string(file) + ": chunk index does not cover sample " + out->key);
  }
  std::string frame(static_cast<size_t>(chunks[c + 1] - chunks[c]), '\0');
  SHARDPACK_RETURN_IF_ERROR(shard->file->Read(static_cast<uint64_t>(chunks[c]), frame.size(), frame.data()));
  const std::vector<ShardIndex::Sample>& table = shard->samples;
  const uint64_t first = c * chunk_samples_, last = std::min<uint64_t>(table.size(), first + chunk_samples_);
  const uint64_t begin = table[first].offset, end = table[last - 1].offset + table[last - 1].size;
  if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != end - begin) {
    return Status::DataLoss(std::string(file) + ": chunk of sample " + out->key + " has the wrong size");
  }
  std::string data(end - begin, '\0');
  const size_t n = ZSTD_decompress(data.data(), data.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != data.size()) {
    return Status::DataLoss(std::string(file) + ": chunk of sample " + out->key + " does not decompress");
  }
  std::memcpy(out->pixels.rgb.data(), data.data() + (r.offset - begin), r.size);
  return Status::OK();
}

Status RawDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  std::shared_ptr<const ShardIndex> shard;
  size_t number = 0, local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &number, &local));
  if (shard->fields == nullptr) return Status::OK();
  std::string lines;
  std::string_view line;
  SHARDPACK_RETURN_IF_ERROR(shard->fields->ReadLine(local, &lines, &line));
  const nlohmann::json fields = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  const std::string file = RawSideFileName(std::string(manifest().shards.file(number)), ".fields.jsonl");
  if (!fields.is_object()) return Status::DataLoss(file + ": line " + std::to_string(local + 1) + " is damaged");
  const auto it = fields.find(name);
  if (it == fields.end()) return Status::OK();
  if (!it->is_string())
    return Status::DataLoss(file + ": field " + name + " of line " + std::to_string(local + 1) + " is not a string");
  *data = it->get<std::string>();
  *present = true;
  return Status::OK();
}

Status RawDatasetReader::ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels,
                                        bool* present) const {
  pixels->clear();
  *present = false;
  std::shared_ptr<const ShardIndex> shard;
  size_t number = 0, local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &number, &local));
  const auto it = shard->masks.find(name);
  if (it == shard->masks.end() || it->second.present[local] == '\0') return Status::OK();
  // A mask slot has a byte per pixel where the image has three: its offset is the image's / 3.
  const ShardIndex::Sample& r = shard->samples[local];
  const uint64_t image_offset = r.offset - (chunk_samples_ == 0 ? kNpyHeaderBytes : 0);
  pixels->resize(uint64_t(r.width) * r.height);
  SHARDPACK_RETURN_IF_ERROR(it->second.file->Read(kNpyHeaderBytes + image_offset / 3, pixels->size(), pixels->data()));
  *present = true;
  return Status::OK();
}

}  // namespace shardpack
