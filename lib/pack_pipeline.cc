// The pack pipeline, shared by pack and convert: a three-stage oneTBB pipeline over a PackInput:
//   1. serial, in order:  the input's next sample, into a reused buffer slot
//   2. parallel:          load its bytes (files), probe the image, decode + transform it (raw)
//   3. serial, in order:  report skips, assign the key, append to the format's DatasetWriter
// Stage 3 sees samples in input order whatever the thread count, so output is byte-identical across
// thread counts. At most `tokens` samples are in flight, each in its own reused buffer, so memory is
// bounded by tokens x max_sample_bytes, not by the dataset's size.
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "formats/lmdb/lmdb_dataset_writer.h"
#include "formats/lmdb/lmdb_format.h"
#include "formats/raw/raw_dataset_writer.h"
#include "formats/wds/wds_dataset_writer.h"
#include "lib/sample_keys.h"
#include "lib/pack_pipeline.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Status ValidatePackOptions(const PackOptions& o) {
  if (o.format != "wds" && o.format != "lmdb" && o.format != "raw") {
    return Status::InvalidArgument("unknown format '" + o.format + "'; use wds, lmdb or raw");
  }
  const bool crop = o.crop_height > 0 || o.crop_width > 0;
  if (o.format == "raw" && crop == o.keep_size) {
    return Status::InvalidArgument(o.keep_size ? "--keep-size and --crop exclude each other"
                                               : "--format raw needs --crop H[xW] (fixed-size images) or --keep-size");
  }
  if (o.format != "raw" && (crop || o.keep_size || o.resize > 0)) {
    return Status::InvalidArgument("--resize, --crop and --keep-size apply to --format raw only");
  }
  if (o.compress != "none" && o.compress != "zstd") {
    return Status::InvalidArgument("unknown compression '" + o.compress + "'; use none or zstd");
  }
  if (o.compress == "zstd" && o.format != "raw") {
    return Status::InvalidArgument("--compress applies to --format raw only (wds and lmdb keep the encoded images)");
  }
  if (o.compress == "zstd" && o.chunk_samples == 0) return Status::InvalidArgument("--chunk-samples must be at least 1");
  if (crop && (o.crop_height == 0 || o.crop_width == 0)) {
    return Status::InvalidArgument("--crop needs a height and a width above zero");
  }
  if (o.prefix.empty() || o.prefix.find_first_of("/.") != std::string::npos) {
    return Status::InvalidArgument("shard prefix '" + o.prefix + "' must be non-empty and contain no '/' or '.'");
  }
  if (o.shard_size_bytes < 4096) return Status::InvalidArgument("shard size must be at least 4096 bytes");
  if (o.samples_per_shard == 0) return Status::InvalidArgument("samples per shard must be at least 1");
  return Status::OK();
}

namespace {

bool IsOurOutputFile(const std::string& name) {
  auto ends_with = [&](const char* suffix) {
    std::string s(suffix);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name == kManifestFileName || ends_with(".tar") || ends_with(".idx") ||
         ends_with(".samples.tsv") || ends_with(".tmp") || ends_with(".npy") || ends_with(".zst") || ends_with(".keys.txt") ||
         name == kLmdbDataFile || name == kLmdbLockFile;
}

// OUT must be empty, or hold a dataset the user agreed to replace. The old manifest goes first, so
// that a pack that dies later never leaves a manifest pointing at a mix of old and new shards.
}  // namespace

Status PrepareOutputDir(Env* env, const std::string& src, const std::string& out, bool force) {
  SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(out));
  char src_real[PATH_MAX], out_real[PATH_MAX];
  if (::realpath(src.c_str(), src_real) && ::realpath(out.c_str(), out_real)) {
    std::string s(src_real), o(out_real);
    if (o == s || o.rfind(s + "/", 0) == 0) {
      return Status::InvalidArgument("output folder " + out + " lies inside the source folder " + src +
                                     "; choose an output folder outside it");
    }
  }
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  if (entries.empty()) return Status::OK();
  if (!force) {
    return Status::InvalidArgument("output folder " + out +
                                   " is not empty; choose an empty folder or pass --force to replace its dataset");
  }
  const std::string manifest = JoinPath(out, kManifestFileName);
  if (env->FileExists(manifest)) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(manifest));
  for (const DirEntry& e : entries) {
    if (e.type == DirEntry::Type::kFile && e.name != kManifestFileName && IsOurOutputFile(e.name)) {
      SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(JoinPath(out, e.name)));
    }
  }
  return Status::OK();
}

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

nlohmann::json OptionsToJson(const PackOptions& o) {
  nlohmann::json j = {{"prefix", o.prefix},
          {"shard_size", o.shard_size_bytes},
          {"samples_per_shard", o.samples_per_shard},
          {"shuffle", o.shuffle},
          {"seed", o.seed},
          {"keys", o.path_keys ? "path" : "index"},
          {"check", o.decode_check ? "decode" : "header"},
          {"max_sample_bytes", o.max_sample_bytes},
          {"max_pixels", o.max_pixels}};
  if (o.format == "raw") {
    const TransformOptions t = RawTransform(o);
    j["resize"] = t.resize_shorter;
    j["crop"] = {t.crop_height, t.crop_width};
    j["keep_size"] = o.keep_size;
    j["compress"] = o.compress;
    if (o.compress == "zstd") j["chunk_samples"] = o.chunk_samples;
  }
  return j;
}

class Packer {
 public:
  Packer(PackInput* input, const std::string& source, const std::string& out, const PackOptions& o, Env* env)
      : input_(input), source_(source), out_(out), options_(o), env_(env), transform_(RawTransform(o)) {}

  Status Run(PackResult* result) {
    start_ = Clock::now();
    for (const SkippedFile& f : input_->initial_skips()) SHARDPACK_RETURN_IF_ERROR(Skip(f));
    writer_ = NewWriter();
    Status s = RunPipeline();
    Manifest& m = result->manifest;
    m.name = BaseName(out_);
    m.format = options_.format;
    m.tool_version = SHARDPACK_VERSION;
    m.options = OptionsToJson(options_);
    m.classes = input_->class_names();
    m.empty_classes = input_->empty_classes();
    m.samples = samples_;
    m.skipped = std::move(skipped_);
    // What the dataset's own metadata record may hold: the manifest, less what depends on the
    // finished files.
    nlohmann::json info = ManifestToJson(m);
    info.erase("shardlist");
    info.erase("bytes");
    std::vector<ShardEntry> shards;
    if (s.ok()) s = writer_->Finish(info, &shards);
    if (!s.ok()) {
      writer_->Abandon();
      return s;
    }
    if (samples_ == 0) {
      return Status::InvalidArgument("no images to pack in " + source_ + " (" +
                                     std::to_string(m.skipped.size()) + " files skipped)");
    }
    m.shards = std::move(shards);
    for (const ShardEntry& e : m.shards) m.bytes += e.bytes;
    SHARDPACK_RETURN_IF_ERROR(WriteManifest(env_, out_, m));
    result->bytes_read = bytes_read_;
    result->seconds = SecondsSince(start_);
    ReportProgress(/*force=*/true);
    return Status::OK();
  }

 private:
  std::unique_ptr<DatasetWriter> NewWriter() const {
    if (options_.format == "lmdb") {
      return std::make_unique<LmdbDatasetWriter>(env_, out_, options_.sync, kLmdbInitialMapSize);
    }
    ShardOptions shards;
    shards.dir = out_;
    shards.prefix = options_.prefix;
    shards.shard_size_bytes = options_.shard_size_bytes;
    shards.samples_per_shard = options_.samples_per_shard;
    shards.sync = options_.sync;
    if (options_.format == "raw") {
      RawWriterOptions ro;
      static_cast<ShardOptions&>(ro) = shards;
      ro.keep_size = options_.keep_size;
      ro.height = transform_.crop_height;
      ro.width = transform_.crop_width;
      ro.zstd_chunk_samples = options_.compress == "zstd" ? options_.chunk_samples : 0;
      return std::make_unique<RawDatasetWriter>(env_, ro);
    }
    return std::make_unique<WdsDatasetWriter>(env_, shards);
  }

  static std::string BaseName(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }

  Status Skip(const SkippedFile& f) {
    skipped_.push_back(f);
    ++files_skipped_;
    if (options_.on_skip) options_.on_skip(f);
    if (options_.strict) {
      return Status::Aborted(f.path + ": " + f.reason + " (--strict stops at the first bad input)");
    }
    return Status::OK();
  }

  void LoadAndProbe(PackItem* item) const {
    if (!item->status.ok()) return;
    if (!item->loaded) {
      item->status = input_->Load(item);
      if (!item->status.ok()) return;
    }
    item->status = ProbeImage(item->bytes, &item->info);
    if (!item->status.ok()) return;
    const uint64_t pixels = uint64_t(item->info.width) * item->info.height;
    if (pixels > options_.max_pixels) {
      item->status = Status::Corrupt("image declares " + std::to_string(item->info.width) + "x" +
                                     std::to_string(item->info.height) + " pixels, more than --max-pixels " +
                                     std::to_string(options_.max_pixels));
      return;
    }
    if (options_.format == "raw") {
      item->status = DecodeAndTransform(item->bytes, transform_, &item->pixels);
    } else if (options_.decode_check) {
      item->status = DecodeImage(item->bytes, options_.max_pixels, &item->pixels);
    }
  }

  Status Write(PackItem* item) {
    ++files_done_;
    if (!item->status.ok()) return Skip({item->relpath, item->status.message()});
    bytes_read_ += item->bytes.size();
    const std::string key = item->key.empty() ? IndexKey(samples_) : item->key;
    const std::vector<std::string>& classes = input_->class_names();
    Sample sample;
    sample.key = key;
    sample.label = item->label;
    if (item->label >= 0 && static_cast<size_t>(item->label) < classes.size()) sample.class_name = classes[item->label];
    sample.relpath = item->relpath;
    if (!item->extra.is_null()) sample.extra = &item->extra;
    sample.image = item->info;
    sample.bytes = item->bytes;
    if (options_.format == "raw") sample.pixels = &item->pixels;
    SHARDPACK_RETURN_IF_ERROR(writer_->Add(sample));
    ++samples_;
    ReportProgress(false);
    return Status::OK();
  }

  Status RunPipeline() {
    // oneTBB runs at most one thread per core (and warns on stderr when asked for more).
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = options_.threads > 0 ? std::min(options_.threads, cores) : cores;
    const size_t tokens = static_cast<size_t>(threads) * 4;
    std::vector<PackItem> slots(tokens);
    size_t next = 0;
    std::atomic<bool> stop{false};
    Status input_error;
    Status error;
    try {
      tbb::task_arena arena(threads);
      arena.execute([&] {
        tbb::parallel_pipeline(
            tokens,
            tbb::make_filter<void, PackItem*>(tbb::filter_mode::serial_in_order,
                                              [&](tbb::flow_control& fc) -> PackItem* {
                                                PackItem* item = &slots[next % tokens];
                                                item->status = Status::OK();
                                                bool done = stop.load();
                                                if (!done) input_error = input_->Next(item, &done);
                                                if (done || !input_error.ok()) {
                                                  fc.stop();
                                                  return nullptr;
                                                }
                                                item->position = next++;
                                                return item;
                                              }) &
                tbb::make_filter<PackItem*, PackItem*>(tbb::filter_mode::parallel,
                                                       [&](PackItem* item) {
                                                         if (!stop.load()) LoadAndProbe(item);
                                                         return item;
                                                       }) &
                tbb::make_filter<PackItem*, void>(tbb::filter_mode::serial_in_order, [&](PackItem* item) {
                  if (stop.load()) return;
                  Status s = Write(item);
                  if (!s.ok()) {
                    error = s;
                    stop.store(true);
                  }
                }));
      });
    } catch (const std::exception& e) {
      return Status::IOError(std::string("pack pipeline failed: ") + e.what());
    }
    return error.ok() ? input_error : error;
  }

  void ReportProgress(bool force) {
    if (!options_.on_progress) return;
    auto now = Clock::now();
    if (!force && now - last_progress_ < std::chrono::milliseconds(100)) return;
    last_progress_ = now;
    PackProgress p;
    const uint64_t initial = input_->initial_skips().size();
    p.files_done = files_done_ + initial;
    p.files_total = input_->expected() + initial;
    p.bytes_read = bytes_read_;
    p.samples_packed = samples_;
    p.files_skipped = files_skipped_;
    p.elapsed_seconds = SecondsSince(start_);
    options_.on_progress(p);
  }

  PackInput* input_;
  const std::string source_, out_;
  const PackOptions& options_;
  Env* env_;
  const TransformOptions transform_;
  Clock::time_point start_, last_progress_;
  std::unique_ptr<DatasetWriter> writer_;
  std::vector<SkippedFile> skipped_;
  uint64_t samples_ = 0, files_done_ = 0, files_skipped_ = 0, bytes_read_ = 0;
};

}  // namespace

Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result) {
  *result = PackResult();
  return Packer(input, source, out, options, env).Run(result);
}

}  // namespace shardpack
