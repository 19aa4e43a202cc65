// pack: scan SRC, then a three-stage oneTBB pipeline:
//   1. serial, in order:  hand out the next file (in pack order) and a buffer slot
//   2. parallel:          read the file, probe (or decode) the image
//   3. serial, in order:  report skips, assign the key, append to the format's DatasetWriter
// Stage 3 sees files in pack order whatever the thread count, so output is byte-identical across
// thread counts. At most `tokens` files are in flight, each in its own reused buffer, so memory is
// bounded by tokens x max_sample_bytes, not by the dataset's size.
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <numeric>
#include <random>
#include <thread>

#include "formats/lmdb/lmdb_dataset_writer.h"
#include "formats/lmdb/lmdb_format.h"
#include "formats/raw/raw_dataset_writer.h"
#include "formats/wds/wds_dataset_writer.h"
#include "lib/sample_keys.h"
#include "lib/source_list.h"
#include "lib/source_scan.h"
#include "shardpack/image.h"
#include "shardpack/pack.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Status ValidateOptions(const PackOptions& o) {
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

bool IsOurOutputFile(const std::string& name) {
  auto ends_with = [&](const char* suffix) {
    std::string s(suffix);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name == kManifestFileName || ends_with(".tar") || ends_with(".idx") ||
         ends_with(".samples.tsv") || ends_with(".tmp") || ends_with(".npy") || ends_with(".keys.txt") ||
         name == kLmdbDataFile || name == kLmdbLockFile;
}

// OUT must be empty, or hold a dataset the user agreed to replace. The old manifest goes first, so
// that a pack that dies later never leaves a manifest pointing at a mix of old and new shards.
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

// Fisher-Yates with mt19937_64, whose output sequence the C++ standard fixes, so a seed gives the
// same order with every compiler (std::shuffle's algorithm is implementation-defined).
std::vector<uint32_t> PackOrder(size_t n, bool shuffle, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (!shuffle) return order;
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

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
  nlohmann::json j = {{"source", o.list_file.empty() ? "tree" : "list"},
                      {"prefix", o.prefix},
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
  }
  return j;
}

// One file in flight through the pipeline. Slots are reused, so buffers keep their capacity.
struct Item {
  size_t position = 0;  // in pack order
  std::string bytes;
  ImageInfo info;
  DecodedImage pixels;  // raw format: decoded and transformed
  Status status;
};

class Packer {
 public:
  Packer(const std::string& src, const std::string& out, const PackOptions& o, Env* env)
      : src_(src), out_(out), options_(o), env_(env), transform_(RawTransform(o)) {}

  Status Run(PackResult* result) {
    start_ = Clock::now();
    SHARDPACK_RETURN_IF_ERROR(ValidateOptions(options_));
    if (!env_->FileExists(src_)) return Status::NotFound("source folder " + src_ + " does not exist");
    SHARDPACK_RETURN_IF_ERROR(PrepareOutputDir(env_, src_, out_, options_.force));
    Status s = options_.list_file.empty() ? ScanSourceTree(env_, src_, &tree_)
                                          : ReadSourceList(env_, options_.list_file, &tree_);
    if (!s.ok()) return s;
    for (const SkippedFile& f : tree_.skipped) SHARDPACK_RETURN_IF_ERROR(Skip(f));

    order_ = PackOrder(tree_.files.size(), options_.shuffle, options_.seed);
    if (options_.path_keys) {
      std::vector<std::string> relpaths;
      relpaths.reserve(order_.size());
      for (uint32_t i : order_) relpaths.push_back(tree_.files[i].relpath);
      path_keys_ = UniquePathKeys(relpaths);
    }

    writer_ = NewWriter();
    s = RunPipeline();
    Manifest& m = result->manifest;
    m.name = BaseName(out_);
    m.format = options_.format;
    m.tool_version = SHARDPACK_VERSION;
    m.options = OptionsToJson(options_);
    m.classes = tree_.class_names;
    m.empty_classes = tree_.empty_classes;
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
      return Status::InvalidArgument("no images to pack in " + src_ + " (" +
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
    if (options_.format == "raw") {
      RawWriterOptions ro;
      ro.dir = out_;
      ro.prefix = options_.prefix;
      ro.shard_size_bytes = options_.shard_size_bytes;
      ro.samples_per_shard = options_.samples_per_shard;
      ro.sync = options_.sync;
      ro.keep_size = options_.keep_size;
      ro.height = transform_.crop_height;
      ro.width = transform_.crop_width;
      return std::make_unique<RawDatasetWriter>(env_, ro);
    }
    WdsWriterOptions wo;
    wo.dir = out_;
    wo.prefix = options_.prefix;
    wo.shard_size_bytes = options_.shard_size_bytes;
    wo.samples_per_shard = options_.samples_per_shard;
    wo.sync = options_.sync;
    return std::make_unique<WdsDatasetWriter>(env_, wo);
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

  void ReadAndProbe(Item* item) const {
    const SourceFile& f = tree_.files[order_[item->position]];
    item->status = env_->ReadFile(JoinPath(src_, f.relpath), options_.max_sample_bytes, &item->bytes);
    if (!item->status.ok()) {
      if (item->status.code() == Status::Code::kInvalidArgument) {
        item->status = Status::InvalidArgument("file is larger than --max-sample-bytes (" +
                                               std::to_string(options_.max_sample_bytes) + " bytes)");
      }
      return;
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

  Status Write(Item* item) {
    ++files_done_;
    const SourceFile& f = tree_.files[order_[item->position]];
    if (!item->status.ok()) return Skip({f.relpath, item->status.message()});
    bytes_read_ += item->bytes.size();
    const std::string key = options_.path_keys ? path_keys_[item->position] : IndexKey(samples_);
    Sample sample;
    sample.key = key;
    sample.label = f.label;
    if (f.label >= 0 && static_cast<size_t>(f.label) < tree_.class_names.size()) {
      sample.class_name = tree_.class_names[f.label];
    }
    sample.relpath = f.relpath;
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
    std::vector<Item> slots(tokens);
    size_t next = 0;
    std::atomic<bool> stop{false};
    Status error;
    try {
      tbb::task_arena arena(threads);
      arena.execute([&] {
        tbb::parallel_pipeline(
            tokens,
            tbb::make_filter<void, Item*>(tbb::filter_mode::serial_in_order,
                                          [&](tbb::flow_control& fc) -> Item* {
                                            if (stop.load() || next >= order_.size()) {
                                              fc.stop();
                                              return nullptr;
                                            }
                                            Item* item = &slots[next % tokens];
                                            item->position = next++;
                                            return item;
                                          }) &
                tbb::make_filter<Item*, Item*>(tbb::filter_mode::parallel,
                                               [&](Item* item) {
                                                 if (!stop.load()) ReadAndProbe(item);
                                                 return item;
                                               }) &
                tbb::make_filter<Item*, void>(tbb::filter_mode::serial_in_order, [&](Item* item) {
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
    return error;
  }

  void ReportProgress(bool force) {
    if (!options_.on_progress) return;
    auto now = Clock::now();
    if (!force && now - last_progress_ < std::chrono::milliseconds(100)) return;
    last_progress_ = now;
    PackProgress p;
    p.files_done = files_done_ + tree_.skipped.size();
    p.files_total = tree_.files.size() + tree_.skipped.size();
    p.bytes_read = bytes_read_;
    p.samples_packed = samples_;
    p.files_skipped = files_skipped_;
    p.elapsed_seconds = SecondsSince(start_);
    options_.on_progress(p);
  }

  const std::string src_, out_;
  const PackOptions& options_;
  Env* env_;
  const TransformOptions transform_;
  Clock::time_point start_, last_progress_;
  SourceTree tree_;
  std::vector<uint32_t> order_;
  std::vector<std::string> path_keys_;
  std::unique_ptr<DatasetWriter> writer_;
  std::vector<SkippedFile> skipped_;
  uint64_t samples_ = 0, files_done_ = 0, files_skipped_ = 0, bytes_read_ = 0;
};

}  // namespace

Status Pack(const std::string& src, const std::string& out, const PackOptions& options, PackResult* result) {
  *result = PackResult();
  Env* env = options.env ? options.env : Env::Default();
  return Packer(src, out, options, env).Run(result);
}

}  // namespace shardpack
