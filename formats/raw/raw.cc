// The raw format behind the Format interface: images decoded and transformed in the pipeline's
// parallel stage, written as pixels.
#include "formats/raw/raw.h"

#include <algorithm>

#include "formats/raw/raw_dataset_reader.h"
#include "formats/raw/raw_dataset_writer.h"
#include "formats/raw/raw_verifier.h"
#include "ground/manifest_json.h"
#include "ground/masked_transform.h"
#include "ground/sample_keys.h"

namespace shardpack {
namespace {

// The effective transform of a raw pack: resize defaults to the crop's longer side.
TransformOptions RawTransform(const PackOptions& o) {
  TransformOptions t;
  t.crop_height = o.crop_height;
  t.crop_width = o.crop_width;
  t.resize_shorter = o.resize > 0 ? o.resize : std::max(o.crop_height, o.crop_width);
  t.max_pixels = o.max_pixels;
  return t;
}

class RawFormatImpl final : public Format {
 public:
  DatasetFormat id() const override { return DatasetFormat::kRaw; }

  Status CheckPackOptions(const PackOptions& o) const override {
    const bool crop = o.crop_height > 0 || o.crop_width > 0;
    if (crop == o.keep_size) {
      return Status::InvalidArgument(o.keep_size
                                         ? "--keep-size and --crop exclude each other"
                                         : "--format raw needs --crop H[xW] (fixed-size images) or --keep-size");
    }
    if (o.compress == RawCompression::kZstd && o.chunk_samples == 0) {
      return Status::InvalidArgument("--chunk-samples must be at least 1");
    }
    if (crop && (o.crop_height == 0 || o.crop_width == 0)) {
      return Status::InvalidArgument("--crop needs a height and a width above zero");
    }
    return Status::OK();
  }

  void AddManifestOptions(const PackOptions& o, nlohmann::json* j) const override {
    const TransformOptions t = RawTransform(o);
    (*j)["resize"] = t.resize_shorter;
    (*j)["crop"] = {t.crop_height, t.crop_width};
    (*j)["keep_size"] = o.keep_size;
    (*j)["compress"] = std::string(RawCompressionName(o.compress));
    if (o.compress == RawCompression::kZstd) (*j)["chunk_samples"] = o.chunk_samples;
  }

  Status TakeManifestOptions(const nlohmann::json& j, const std::set<std::string>& given,
                             PackOptions* o) const override {
    try {
      if (!given.count("crop") && j.contains("crop")) {
        o->crop_height = j.at("crop").at(0).get<uint32_t>();
        o->crop_width = j.at("crop").at(1).get<uint32_t>();
      }
      if (!given.count("resize") && j.contains("resize")) o->resize = j.at("resize").get<uint32_t>();
      if (!given.count("keep_size") && j.contains("keep_size")) o->keep_size = j.at("keep_size").get<bool>();
      if (!given.count("compress") && j.contains("compress")) {
        SHARDPACK_RETURN_IF_ERROR(ParseRawCompression(j.at("compress").get<std::string>(), &o->compress));
      }
      if (!given.count("chunk_samples") && j.contains("chunk_samples")) {
        o->chunk_samples = j.at("chunk_samples").get<uint32_t>();
      }
    } catch (const nlohmann::json::exception& e) {
      return Status::DataLoss(std::string("the manifest's raw options are not as pack writes them: ") + e.what());
    }
    return Status::OK();
  }

  // The image decoded and transformed; each mask field decoded and cut by the same plan, by
  // nearest neighbour, so that its class ids stay exact and line up with the stored pixels.
  Status PrepareSample(const PackOptions& options, PackItem* item) const override {
    std::vector<std::string_view> masks;
    std::vector<const std::string*> names;  // of masks[i]'s field
    for (const SampleField& f : item->fields) {
      if (!IsImageFieldKind(FieldKind(f.name))) continue;
      masks.push_back(f.data);
      names.push_back(&f.name);
    }
    thread_local std::vector<std::string> pixels;
    size_t bad = 0;
    const Status s =
        DecodeAndTransformWithMasks(item->bytes, RawTransform(options), masks, &item->pixels, &pixels, &bad);
    item->masks.resize(masks.size());
    if (!s.ok()) {
      if (bad >= masks.size()) return s;
      return Status::Corrupt("field " + *names[bad] + ": " + s.message() +
                             " (raw keeps image fields as label masks; --format wds or lmdb keeps any file)");
    }
    for (size_t i = 0; i < masks.size(); ++i) {
      item->masks[i].name = *names[i];
      item->masks[i].pixels.swap(pixels[i]);
    }
    return Status::OK();
  }

  std::unique_ptr<DatasetWriter> NewWriter(Env* env, const std::string& out,
                                           const PackOptions& options) const override {
    RawWriterOptions ro;
    static_cast<ShardOptions&>(ro) = ShardOptionsOf(out, options);
    const TransformOptions t = RawTransform(options);
    ro.keep_size = options.keep_size;
    ro.height = t.crop_height;
    ro.width = t.crop_width;
    ro.zstd_chunk_samples = options.compress == RawCompression::kZstd ? options.chunk_samples : 0;
    return std::make_unique<RawDatasetWriter>(env, ro);
  }

  Status OpenConvertInput(Env*, const std::string& dir, const Manifest&, uint64_t,
                          std::unique_ptr<PackInput>*) const override {
    return Status::Unsupported(
        dir + " is a 'raw' dataset, which holds decoded pixels only; convert the wds or lmdb dataset it was made from");
  }

  Status OpenReader(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                    const RemoteOptions& options, std::unique_ptr<DatasetReader>* reader) const override {
    return RawDatasetReader::Open(env, dir, std::move(manifest), IndexMemory(options), reader);
  }

  void VerifyShard(Env* env, const std::string& dir, const Manifest& manifest, size_t shard, const VerifyOptions&,
                   ShardCheck* check) const override {
    nlohmann::json options;
    const Status s = ManifestOptions(manifest, &options);
    if (!s.ok()) {
      check->AddProblem(kManifestFileName, "", s.message());
      return;
    }
    VerifyRawShard(env, dir, manifest.shards[shard], options, check);
  }

  Status ReadSampleRecords(Env* env, const std::string& dir, const ShardEntry& shard,
                           std::vector<SampleRecord>* records) const override {
    return ReadShardSampleTable(env, dir, shard, records);
  }
  Status ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard,
                        std::vector<ShownSize>* sizes) const override {
    return shardpack::ReadShownSizes(env, dir, shard, sizes);
  }

  // Text fields (captions, annotations) go into a per-shard JSON Lines side file, image fields
  // (masks) into a pixel array per field; other files are not kept.
  bool stores_fields() const override { return true; }
  bool StoresField(const std::string& name) const override {
    const std::string kind = FieldKind(name);
    return kind == "txt" || kind == "json" || IsImageFieldKind(kind);
  }

  bool OwnsFile(std::string_view name) const override {
    return EndsWith(name, ".npy") || EndsWith(name, ".zst") || EndsWith(name, ".keys.txt") ||
           EndsWith(name, ".samples.tsv") || EndsWith(name, ".fields.jsonl");
  }
  bool LooksLikeShard(std::string_view name) const override {
    return name.size() > 4 && (EndsWith(name, ".npy") || EndsWith(name, ".zst")) && name.find('.') == name.rfind('.');
  }
};

}  // namespace

const Format& RawFormat() {
  static const RawFormatImpl format;
  return format;
}

}  // namespace shardpack
