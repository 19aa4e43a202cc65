#include "formats/mds/mds.h"

#include <mutex>
#include <string_view>
#include <vector>

#include "formats/mds/mds_dataset.h"
#include "formats/mds/mds_dataset_reader.h"
#include "formats/mds/mds_input.h"
#include "formats/mds/mds_shard_file.h"
#include "ground/little_endian.h"
#include "ground/sample_keys.h"

namespace shardpack {
namespace {

// verify and stat ask for one shard at a time, from several threads: the folder's index.json is
// parsed once for all of them (an index of 10,000 shards is megabytes), and again when the file
// changes (another inode or size).
Status SharedMdsDataset(Env* env, const std::string& dir, std::shared_ptr<const MdsDataset>* dataset) {
  static std::mutex mu;
  static std::string cached_dir;
  static FileId cached_id;
  static uint64_t cached_size = 0;
  static std::shared_ptr<const MdsDataset> cached;
  const std::string path = JoinPath(dir, kMdsIndexFileName);
  FileId id;
  uint64_t size = 0;
  const bool known = env->GetFileId(path, &id).ok() && env->GetFileSize(path, &size).ok();
  std::lock_guard<std::mutex> lock(mu);
  if (known && cached != nullptr && cached_dir == dir && cached_id == id && cached_size == size) {
    *dataset = cached;
    return Status::OK();
  }
  auto opened = std::make_shared<MdsDataset>();
  SHARDPACK_RETURN_IF_ERROR(OpenMdsDataset(env, dir, opened.get()));
  *dataset = opened;
  if (known) {
    cached_dir = dir;
    cached_id = id;
    cached_size = size;
    cached = std::move(opened);
  }
  return Status::OK();
}

// The entry of MDS, and of LitData (read by the same code, litdata_index.h): every operation but
// writing. `id` says which; `shard_prefix` and `shard_suffixes` name its shard files.
class MdsFormatImpl final : public ReadOnlyFormat {
 public:
  MdsFormatImpl(DatasetFormat id, std::string_view shard_prefix, std::vector<std::string_view> shard_suffixes)
      : id_(id), shard_prefix_(shard_prefix), shard_suffixes_(std::move(shard_suffixes)) {}
  DatasetFormat id() const override { return id_; }

  Status OpenConvertInput(Env* env, const std::string& dir, const Manifest&, uint64_t max_member_bytes,
                          std::unique_ptr<PackInput>* input) const override {
    return MdsInput::Open(env, dir, max_member_bytes, input);
  }

  Status OpenReader(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                    const RemoteOptions&, std::unique_ptr<DatasetReader>* reader) const override {
    return MdsDatasetReader::Open(env, dir, std::move(manifest), reader);
  }

  void VerifyShard(Env* env, const std::string& dir, const Manifest&, size_t shard, const VerifyOptions& options,
                   ShardCheck* check) const override {
    std::shared_ptr<const MdsDataset> shared;
    Status s = SharedMdsDataset(env, dir, &shared);
    if (s.ok() && shard >= shared->index.shards.size()) s = Status::DataLoss("index.json changed during verify");
    if (!s.ok()) {
      check->AddProblem(kMdsIndexFileName, "", s.message());
      return;
    }
    const MdsDataset& dataset = *shared;
    const std::string name = dataset.index.shards[shard].stored().basename;
    const MdsShardInfo& info = dataset.index.shards[shard];
    std::string stored, decompressed;
    s = ReadMdsStoredShard(env, dir, info, &stored);
    if (!s.ok()) {
      check->AddProblem(name, "", s.message());
      return;
    }
    check->bytes = stored.size();
    std::vector<std::string> problems, unchecked;
    CheckMdsHashes(info.stored(), stored, &problems, &unchecked);
    std::string_view raw = stored;  // an uncompressed shard is read as it is stored
    if (info.compressed) {
      s = DecompressMdsShard(JoinPath(dir, name), info, stored, &decompressed);
      raw = decompressed;
      if (s.ok()) CheckMdsHashes(info.raw, raw, &problems, &unchecked);
    }
    for (const std::string& p : problems) check->AddProblem(name, "", p);
    MdsShardView view;
    if (s.ok()) s = MdsShardView::Open(raw, info.samples, JoinPath(dir, name), &view);
    if (!s.ok()) {
      check->AddProblem(name, "", s.message());
      return;
    }
    const uint64_t first = dataset.first_sample[shard];
    for (uint64_t i = 0; i < info.samples; ++i) {
      MdsDecoded decoded;
      s = DecodeMdsSampleBytes(dataset, view.sample(i), /*want_fields=*/true, options.max_pixels, &decoded);
      if (s.ok() && !dataset.layout.image_is_pil) {
        ImageInfo image;
        s = ProbeImage(decoded.encoded, &image);
        if (s.ok() && options.decode) {
          DecodedImage pixels;
          s = DecodeImage(decoded.encoded, options.max_pixels, &pixels);
          if (s.ok()) ++check->images_decoded;
        }
      } else if (s.ok() && options.decode) {
        ++check->images_decoded;  // a pil image's pixels were checked against its size
      }
      ++check->samples;
      if (!s.ok()) check->AddProblem(name, IndexKey(first + i), "sample " + std::to_string(i) + ": " + s.message());
    }
  }

  Status ReadSampleRecords(Env* env, const std::string& dir, const ShardEntry& entry,
                           std::vector<SampleRecord>* records) const override {
    std::shared_ptr<const MdsDataset> shared;
    SHARDPACK_RETURN_IF_ERROR(SharedMdsDataset(env, dir, &shared));
    const MdsDataset& dataset = *shared;
    const auto found = dataset.by_file.find(entry.file);
    if (found == dataset.by_file.end()) {
      return Status::NotFound(JoinPath(dir, entry.file) + " is not a shard index.json lists");
    }
    const MdsShardInfo& info = dataset.index.shards[found->second];
    const uint64_t first = dataset.first_sample[found->second];
    WholeFile bytes;
    SHARDPACK_RETURN_IF_ERROR(LoadMdsShard(env, dir, info, &bytes));
    const std::string_view raw = bytes.bytes();
    MdsShardView view;
    SHARDPACK_RETURN_IF_ERROR(MdsShardView::Open(raw, info.samples, JoinPath(dir, entry.file), &view));
    // stat needs a pil image's size, not its pixels: its bytes are taken as they are.
    MdsLayout sizes_only = dataset.layout;
    sizes_only.image_is_pil = false;
    records->clear();
    for (uint64_t i = 0; i < info.samples; ++i) {
      const std::string_view sample = view.sample(i);
      MdsDecoded decoded;
      SHARDPACK_RETURN_IF_ERROR(
          DecodeMdsSampleBytes(dataset, sample, /*want_fields=*/false, /*max_pixels=*/0, &decoded, &sizes_only)
              .WithPrefix(JoinPath(dir, MdsSampleName(info, i)) + ": "));
      SampleRecord r;
      r.key = IndexKey(first + i);
      r.offset = uint64_t(sample.data() - raw.data());
      r.size = sample.size();
      r.label = decoded.label;
      if (dataset.layout.image_is_pil) {
        // A pil image's header: its width, height (verify checks that its pixels fill them).
        if (decoded.encoded.size() >= 8) {
          r.width = LoadLe32(decoded.encoded.data());
          r.height = LoadLe32(decoded.encoded.data() + 4);
        }
      } else {
        ImageInfo image;
        if (ProbeImage(decoded.encoded, &image).ok()) {
          r.format = image.format;
          r.width = image.width;
          r.height = image.height;
          if (image.format == ImageFormat::kJpeg) r.orientation = uint8_t(JpegExifOrientation(decoded.encoded));
        }
      }
      records->push_back(std::move(r));
    }
    return Status::OK();
  }

  bool LooksLikeShard(std::string_view name) const override {
    if (name.substr(0, shard_prefix_.size()) != shard_prefix_) return false;
    for (const std::string_view suffix : shard_suffixes_) {
      if (EndsWith(name, suffix)) return true;
    }
    return false;
  }

 private:
  DatasetFormat id_;
  std::string_view shard_prefix_;
  std::vector<std::string_view> shard_suffixes_;
};

}  // namespace

const Format& MdsFormat() {
  static const MdsFormatImpl format(DatasetFormat::kMds, "shard.", {".mds", ".mds.zstd"});
  return format;
}

const Format& LitDataFormat() {
  static const MdsFormatImpl format(DatasetFormat::kLitData, "chunk-", {".bin"});
  return format;
}

Status OpenMdsManifest(Env* env, const std::string& dir, Manifest* manifest, const Format** format) {
  MdsDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenMdsDataset(env, dir, &dataset));
  *manifest = MdsManifest(dataset);
  *format = dataset.format == DatasetFormat::kLitData ? &LitDataFormat() : &MdsFormat();
  return Status::OK();
}

}  // namespace shardpack
