// shardpack doctor: the measurements, stage by stage (include/shardpack/doctor.h). The verdict
// drawn from them is ops/diagnose/doctor_verdict.cc's.
//
// Every stage is bounded twice: by its share of DoctorOptions::seconds and by the sample (files
// and bytes), so a huge or slow dataset costs no more than a small one. The only files written are
// the packed sample's, in a temporary folder removed at the end, also on failure.
#include "shardpack/doctor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <opencv2/core.hpp>
#include <random>
#include <thread>

#include "ground/checked_size.h"
#include "ground/image_decode_rgb.h"
#include "ground/mirror_rgb.h"
#include "ground/status_of_call.h"
#include "ground/worker_threads.h"
#include "ops/diagnose/doctor_verdict.h"
#include "ops/pack/source_scan.h"
#include "ops/read/loader_crop.h"
#include "ops/read/opened_dataset.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/image.h"
#include "shardpack/loader_bench.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"
#include "storage/location.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Shares of DoctorOptions::seconds.
constexpr double kStorageShare = 0.3, kDecodeShare = 0.3, kTransformShare = 0.1, kLoaderShare = 0.3;

// The sample in memory: each file's bytes, as read.
struct SampleImage {
  std::string relpath;
  std::string bytes;
};

// A temporary folder, removed with everything in it when this goes out of scope.
class TempFolder {
 public:
  Status Make(const std::string& parent_option) {
    std::string parent = parent_option;
    if (parent.empty()) parent = "/tmp";
    std::string pattern = JoinPath(parent, "shardpack-doctor-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IOError("cannot make a temporary folder in " + parent + " (set TMPDIR to a writable folder)");
    }
    path_ = pattern;
    return Status::OK();
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs fn(i) for i in [0, n) on `threads` threads until done or `seconds` passed; returns how
// many calls succeeded (fn returned true: a file read, an image decoded) and the seconds all took.
// A call that throws counts as failed, as one that returns false: the measuring threads must not
// end the process.
template <typename Fn>
uint64_t TimedParallel(int threads, uint64_t n, double seconds, Fn fn, double* elapsed) {
  std::atomic<uint64_t> next{0}, done{0};
  const auto start = Clock::now();
  auto work = [&] {
    for (uint64_t i; (i = next.fetch_add(1)) < n;) {
      if (Since(start) > seconds) break;
      bool succeeded = false;
      (void)StatusOfCall("doctor", [&] {
        succeeded = fn(i);
        return Status::OK();
      });
      if (succeeded) done.fetch_add(1);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  *elapsed = std::max(Since(start), 1e-9);
  return done.load();
}

class Doctor {
 public:
  Doctor(const std::string& path, const DoctorOptions& o, DoctorReport* r)
      : path_(path), o_(o), r_(r), env_(o.env != nullptr ? o.env : Env::Default()) {}

  Status Run() {
    r_->path = path_;
    r_->threads = WorkerThreads(o_.threads);
    r_->cores = std::max(1u, std::thread::hardware_concurrency());
    r_->cold = o_.cold;
    if (o_.seconds <= 0) return Status::InvalidArgument("--seconds must be above zero");
    if (o_.crop == 0 || o_.batch == 0) return Status::InvalidArgument("--crop and --batch must be above zero");
    Location location;
    SHARDPACK_RETURN_IF_ERROR(ParseLocation(path_, &location));
    if (location.remote()) {
      return Status::Unsupported(path_ + ": doctor measures local folders; for a dataset URL, `shardpack bench " +
                                 path_ + "` measures the loader over the network");
    }
    if (!env_->FileExists(path_)) {
      return Status::NotFound(path_ + " does not exist (give an image folder or a packed dataset folder)");
    }
    SHARDPACK_RETURN_IF_ERROR(temp_.Make(o_.temp_parent));
    r_->packed_input = env_->FileExists(JoinPath(path_, kManifestFileName));
    std::string dataset = path_;
    if (r_->packed_input) {
      SHARDPACK_RETURN_IF_ERROR(MeasurePackedStorage());
      SHARDPACK_RETURN_IF_ERROR(SampleFromDataset());
    } else {
      SHARDPACK_RETURN_IF_ERROR(MeasureFolderStorage());
      dataset = JoinPath(temp_.path(), "packed");
      SHARDPACK_RETURN_IF_ERROR(PackSampleAndReadIt(dataset));
    }
    MeasureDecode();
    MeasureTransform();
    MeasureHostToDevice();
    SHARDPACK_RETURN_IF_ERROR(MeasureLoader(dataset));
    DrawVerdict(o_, r_);
    return Status::OK();
  }

 private:
  void Progress(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }

  // Reads `files` (of tree_) on `threads` threads within `seconds`; keeps their bytes in sample_
  // when `keep`; reads no more files once `max_bytes` are read (memory stays bounded). Returns the
  // files and bytes read, and the seconds. A file that cannot be read is left out (pack reports
  // such files; doctor measures).
  void ReadPass(const std::vector<size_t>& files, int threads, double seconds, bool keep, uint64_t max_bytes,
                uint64_t* count, uint64_t* bytes, double* elapsed) {
    std::vector<std::string> data(files.size());
    std::atomic<uint64_t> total{0};
    *count = TimedParallel(
        threads, files.size(), seconds,
        [&](uint64_t i) {
          if (total.load() >= max_bytes) return false;
          if (!env_->ReadFile(JoinPath(path_, tree_.files[files[i]].relpath), 1ull << 31, &data[i]).ok()) {
            data[i].clear();
            return false;
          }
          total += data[i].size();
          return true;
        },
        elapsed);
    *bytes = total.load();
    if (!keep) return;
    for (size_t i = 0; i < files.size(); ++i) {
      if (!data[i].empty()) sample_.push_back({tree_.files[files[i]].relpath, std::move(data[i])});
    }
  }

  // Listing, then small-file reads: half the sample on one thread, the other half on all, and the
  // first half again (the page cache's speed).
  Status MeasureFolderStorage() {
    Progress("storage: listing " + path_);
    const auto t0 = Clock::now();
    SHARDPACK_RETURN_IF_ERROR(ScanSourceTree(env_, path_, SourceLayout::kSamples, &tree_));
    r_->list_seconds = std::max(Since(t0), 1e-9);
    r_->files_listed = tree_.files.size() + tree_.skipped.size();
    for (const SourceFile& f : tree_.files) r_->files_listed += f.fields.size();
    r_->files_listed_per_s = r_->files_listed / r_->list_seconds;
    if (tree_.files.empty()) return Status::NotFound("no images in " + path_ + " (jpg, jpeg, png, webp, bmp)");

    // A random sample of at most sample_files files (ReadPass bounds its bytes).
    std::vector<size_t> order(tree_.files.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937_64 rng(o_.seed);
    const size_t n = std::min<size_t>(order.size(), std::max<uint64_t>(2, o_.sample_files));
    for (size_t i = 0; i < n; ++i) std::swap(order[i], order[i + rng() % (order.size() - i)]);
    order.resize(n);
    const size_t half = (n + 1) / 2;
    std::vector<size_t> first(order.begin(), order.begin() + half), second(order.begin() + half, order.end());
    const double budget = o_.seconds * kStorageShare / 4;  // each of the three passes, and the packed read

    if (o_.cold) {
      for (size_t f : order) (void)env_->DropCachedPages(JoinPath(path_, tree_.files[f].relpath));
    }
    // What the cache holds of the sample before reading it (the storage's own speed shows only
    // where it holds little).
    double cached = 0;
    size_t told = 0;
    for (size_t f : order) {
      double share = 0;
      if (env_->CachedShare(JoinPath(path_, tree_.files[f].relpath), &share).ok()) cached += share, ++told;
    }
    r_->cached_share = told > 0 ? cached / double(told) : 0;
    r_->page_cache_held = told > 0 && r_->cached_share >= 0.9;

    Progress("storage: reading " + std::to_string(first.size()) + " files with 1 thread" + (o_.cold ? ", cold" : ""));
    uint64_t count = 0, bytes = 0;
    double seconds = 0;
    ReadPass(first, 1, budget, true, o_.sample_bytes / 2, &count, &bytes, &seconds);
    r_->read1_files_per_s = count / seconds;
    r_->read1_mb_per_s = bytes / seconds / 1e6;
    r_->sample_files += count;
    r_->sample_bytes += bytes;
    // The files the first pass got to (all of them, unless its time ran out).
    const std::vector<size_t> reread(first.begin(), first.begin() + std::min<size_t>(first.size(), count));

    if (!second.empty()) {
      Progress("storage: reading " + std::to_string(second.size()) + " other files with " +
               std::to_string(r_->threads) + " threads");
      ReadPass(second, r_->threads, budget, true, o_.sample_bytes / 2, &count, &bytes, &seconds);
      r_->readn_files_per_s = count / seconds;
      r_->readn_mb_per_s = bytes / seconds / 1e6;
      r_->sample_files += count;
      r_->sample_bytes += bytes;
    } else {
      r_->readn_files_per_s = r_->read1_files_per_s;
      r_->readn_mb_per_s = r_->read1_mb_per_s;
    }

    Progress("storage: the same " + std::to_string(reread.size()) + " files again (page cache)");
    ReadPass(reread, 1, budget, false, o_.sample_bytes, &count, &bytes, &seconds);  // from the cache
    r_->reread_files_per_s = count / seconds;
    return Status::OK();
  }

  // Packs the sample read into `dataset` (wds, in the temporary folder) and reads its shards front
  // to back: what packing gains on sequential reads.
  Status PackSampleAndReadIt(const std::string& dataset) {
    std::string list;
    for (const SampleImage& s : sample_) list += s.relpath + "\t-1\n";
    const std::string list_file = JoinPath(temp_.path(), "sample.tsv");
    SHARDPACK_RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), list_file, list, false));
    PackOptions po;
    po.list_file = list_file;
    po.sync = o_.cold;  // --cold drops the shard's pages before reading it: only written-back ones can go
    po.threads = r_->threads;
    po.env = env_;
    PackResult result;
    Progress("storage: packing the " + std::to_string(sample_.size()) + " files into a shard in " + temp_.path());
    SHARDPACK_RETURN_IF_ERROR(Pack(path_, dataset, po, &result).WithPrefix("packing the sample: "));
    Manifest m;
    SHARDPACK_RETURN_IF_ERROR(ReadManifest(Env::Default(), dataset, &m));
    return ReadShardsInOrder(Env::Default(), dataset, m);
  }

  // A packed dataset: its shards read front to back, up to sample_bytes.
  Status MeasurePackedStorage() {
    OpenedDataset dataset;  // a view's: its base, whose shards it reads
    SHARDPACK_RETURN_IF_ERROR(OpenDatasetAt(path_, RemoteOptions(), env_, &dataset));
    return ReadShardsInOrder(env_, dataset.dir, dataset.manifest);
  }

  Status ReadShardsInOrder(Env* env, const std::string& dir, const Manifest& m) {
    Progress("storage: reading packed shards front to back");
    std::string buffer(4 << 20, '\0');
    uint64_t bytes = 0, samples = 0, listed = 0;
    double cached = 0;
    const auto start = Clock::now();
    const double budget = o_.seconds * kStorageShare / 4;
    for (const ShardEntry& shard : m.shards) {
      if (bytes >= o_.sample_bytes || Since(start) > budget) break;
      const std::string file = JoinPath(dir, shard.file);
      if (o_.cold) (void)env->DropCachedPages(file);
      double share = 0;
      if (env->CachedShare(file, &share).ok()) cached += share * double(shard.bytes);
      std::unique_ptr<SequentialFile> f;
      SHARDPACK_RETURN_IF_ERROR(env->NewSequentialFile(file, &f));
      uint64_t shard_bytes = 0;
      for (size_t n = 1; n > 0 && bytes < o_.sample_bytes && Since(start) <= budget;) {
        SHARDPACK_RETURN_IF_ERROR(f->Read(buffer.size(), buffer.data(), &n));
        bytes += n;
        shard_bytes += n;
      }
      samples +=
          shard.bytes > 0 ? uint64_t(double(shard.samples) * std::min(1.0, double(shard_bytes) / shard.bytes)) : 0;
      listed += shard.bytes;
    }
    r_->packed_cached_share = listed > 0 ? cached / double(listed) : 0;
    const double seconds = std::max(Since(start), 1e-9);
    r_->packed_mb_per_s = bytes / seconds / 1e6;
    r_->packed_images_per_s = samples / seconds;
    return Status::OK();
  }

  // A packed dataset's sample for the decode stages: samples spread evenly over it.
  Status SampleFromDataset() {
    std::unique_ptr<DatasetReader> reader;
    SHARDPACK_RETURN_IF_ERROR(DatasetReader::Open(path_, env_, &reader));
    const uint64_t n = std::min<uint64_t>(reader->size(), o_.sample_files);
    ReadSample s;
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < n && bytes < o_.sample_bytes; ++i) {
      SHARDPACK_RETURN_IF_ERROR(reader->Read(i * reader->size() / n, &s));
      if (s.encoded.empty()) continue;  // raw: pre-decoded, nothing to decode
      bytes += s.encoded.size();
      sample_.push_back({s.key, s.encoded});
    }
    r_->sample_files = sample_.size();
    r_->sample_bytes = bytes;
    return Status::OK();
  }

  // The shorter side an image is cut to: the crop's, or its bucket's (as the loader chooses it).
  uint32_t TargetShorterSide(const ImageInfo& info) const {
    if (o_.buckets.empty()) return o_.crop;
    const Bucket& b = o_.buckets[NearestBucket(o_.buckets, info.width, info.height)];
    return std::min(b.width, b.height);
  }

  // Per core: the whole decode and the loader's crop-aware decode of the same images, and the
  // images' sizes.
  void MeasureDecode() {
    if (sample_.empty()) return;
    std::vector<double> megapixels;
    uint64_t big = 0, bytes = 0;
    std::vector<uint32_t> widths, heights;
    for (const SampleImage& s : sample_) {
      ImageInfo info;
      if (!ProbeImage(s.bytes, &info).ok()) continue;
      widths.push_back(info.width);
      heights.push_back(info.height);
      megapixels.push_back(double(info.width) * info.height / 1e6);
      big += std::min(info.width, info.height) > 2 * TargetShorterSide(info);
      bytes += s.bytes.size();
    }
    if (!megapixels.empty()) {
      const auto at = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
      };
      r_->median_megapixels = at(megapixels, 0.5);
      r_->p90_megapixels = at(megapixels, 0.9);
      std::nth_element(widths.begin(), widths.begin() + widths.size() / 2, widths.end());
      std::nth_element(heights.begin(), heights.begin() + heights.size() / 2, heights.end());
      r_->median_width = widths[widths.size() / 2];
      r_->median_height = heights[heights.size() / 2];
      r_->share_above_2x_crop = double(big) / double(megapixels.size());
      r_->mean_image_bytes = double(bytes) / double(megapixels.size());
    }
    // Three measurements share the decode's time where there are several threads: the whole image
    // and the crop on one thread (per core), then the crop on every thread at once. The last is the
    // decode row's figure: cores decoding together are each slower than one alone (shared caches
    // and memory, a lower clock with more cores busy, SMT siblings), so one core's rate x threads
    // would promise what the loader's threads cannot reach.
    const bool together = r_->threads > 1;
    const double budget = o_.seconds * kDecodeShare / (together ? 3 : 2);
    Progress("decode: whole images, 1 thread");
    double seconds = 0;
    cv::Mat rgb;
    cv::Size full;
    uint64_t n = TimedParallel(
        1, RepeatCount(), budget, [&](uint64_t i) { return DecodeOrientedRgb(Image(i), kMaxPixels, &rgb, &full).ok(); },
        &seconds);
    r_->decoded = n;
    r_->full_decode_per_core = n / seconds;

    const std::string crop = o_.buckets.empty() ? "the training crop only" : "each image's bucket crop only";
    const LoaderOptions lo = CropOptions();
    const auto decode_crop = [this, &lo](uint64_t i) {
      std::mt19937_64 rng(o_.seed + i);
      const auto choose = [this, &lo, &rng](cv::Size size) { return TrainingCrop(lo, &rng, size); };
      thread_local cv::Mat dst;  // each measuring thread's own output
      return DecodeCrop(Image(i), kMaxPixels, choose, lo.fast_decode, &dst).ok();
    };
    Progress("decode: " + crop + " (shardpack's decode), 1 thread");
    n = TimedParallel(1, RepeatCount(), budget, decode_crop, &seconds);
    r_->crop_decode_per_core = n / seconds;
    if (together) {
      Progress("decode: " + crop + ", " + std::to_string(r_->threads) + " threads at once");
      n = TimedParallel(r_->threads, RepeatCount(), budget, decode_crop, &seconds);
      r_->crop_decode_together = n / seconds;
    }
  }

  // Per core: the random-resized-crop and flip of decoded images into a batch buffer.
  void MeasureTransform() {
    std::vector<cv::Mat> decoded;
    for (size_t i = 0; i < sample_.size() && decoded.size() < 32; ++i) {
      cv::Mat rgb;
      cv::Size full;
      if (DecodeOrientedRgb(sample_[i].bytes, kMaxPixels, &rgb, &full).ok()) decoded.push_back(rgb.clone());
    }
    if (decoded.empty()) return;
    Progress(o_.buckets.empty() ? "transform: random-resized-crop " + std::to_string(o_.crop) + " and flip, 1 thread"
                                : "transform: each image's bucket crop and flip, 1 thread");
    const LoaderOptions lo = CropOptions();
    std::vector<uint8_t> batch(OutputPixels() * 3);
    double seconds = 0;
    const uint64_t n = TimedParallel(
        1, RepeatCount(), o_.seconds * kTransformShare,
        [&](uint64_t i) {
          std::mt19937_64 rng(o_.seed + i);
          const cv::Mat& rgb = decoded[i % decoded.size()];
          const CropPlan plan = TrainingCrop(lo, &rng, rgb.size());
          cv::Mat out(plan.out, CV_8UC3, batch.data());  // (the largest output fits)
          ResizeCrop(rgb, plan, &out);
          if (Uniform(rng, 0, 1) < lo.flip) MirrorRgbInPlace(&out);  // (as the loader flips)
          return true;
        },
        &seconds);
    r_->transform_per_core = n / seconds;
  }

  // Pageable and pinned copies of whole batches into GPU memory, where the build and the machine
  // have CUDA.
  void MeasureHostToDevice() {
    if (!o_.host_to_device) {
      r_->host_to_device_note = "not measured: this shardpack was built without CUDA";
      return;
    }
    Progress("host to device: batches of " + std::to_string(o_.batch) + ", pageable and pinned");
    uint64_t batch_bytes = 0;
    if (!CheckedProduct({o_.batch, OutputPixels(), 3}, &batch_bytes) || batch_bytes > kMaxBatchBytes) {
      r_->host_to_device_note = "not measured: batches of " + std::to_string(o_.batch) + " images of " +
                                std::to_string(OutputPixels()) + " pixels are over the " +
                                std::to_string(kMaxBatchBytes >> 30) + " GiB the loader allows a batch: lower --batch";
      return;
    }
    const Status s = o_.host_to_device(batch_bytes, o_.seconds * kTransformShare, &r_->host_to_device);
    if (!s.ok()) {
      r_->host_to_device_note = "not measured: " + s.message();
      return;
    }
    r_->host_to_device_measured = true;
    r_->host_to_device_images_per_s = r_->host_to_device.pinned_batches_per_s * o_.batch;
  }

  Status MeasureLoader(const std::string& dataset) {
    Progress("loader: " + std::to_string(r_->threads) + " threads, batch " + std::to_string(o_.batch));
    BenchOptions bo;
    bo.loader = CropOptions();
    bo.loader.buckets = o_.buckets;
    bo.loader.threads = r_->threads;
    bo.loader.sampler.batch_size = o_.batch;
    bo.seconds = o_.seconds * kLoaderShare;
    BenchResult b;
    SHARDPACK_RETURN_IF_ERROR(RunLoaderBench(dataset, bo, &b).WithPrefix("the loader stage: "));
    r_->loader_images_per_s = b.images_per_second;
    r_->loader_read_seconds = b.read_seconds;
    r_->loader_decode_seconds = b.decode_seconds;
    r_->loader_slowest_stage = b.read_seconds > b.decode_seconds ? "read" : "decode+transform";
    return Status::OK();
  }

  // The training crop the loader gives an image of `full` size: random-resized-crop, or its bucket's.
  CropPlan TrainingCrop(const LoaderOptions& lo, std::mt19937_64* rng, cv::Size full) const {
    if (o_.buckets.empty()) return LoaderCropPlan(lo, rng, full);
    return BucketCropPlan(o_.buckets[NearestBucket(o_.buckets, uint32_t(full.width), uint32_t(full.height))], true, rng,
                          full);
  }
  // Pixels of the largest image the loader outputs: the crop's, or the largest bucket's.
  size_t OutputPixels() const {
    return o_.buckets.empty() ? size_t(o_.crop) * o_.crop : size_t(LargestBucketPixels(o_.buckets));
  }

  LoaderOptions CropOptions() const {
    LoaderOptions lo;
    lo.height = lo.width = o_.crop;
    return lo;
  }
  // Decode loops run over the sample again and again until their time is up (a small sample would
  // otherwise be timed on too few images).
  uint64_t RepeatCount() const { return uint64_t(1) << 40; }
  std::string_view Image(uint64_t i) const { return sample_[i % sample_.size()].bytes; }

  static constexpr uint64_t kMaxPixels = 178'956'970;
  const std::string path_;
  const DoctorOptions& o_;
  DoctorReport* r_;
  Env* env_;
  TempFolder temp_;
  SourceTree tree_;
  std::vector<SampleImage> sample_;
};

}  // namespace

Status RunDoctor(const std::string& path, const DoctorOptions& options, DoctorReport* report) {
  *report = DoctorReport();
  return Doctor(path, options, report).Run();
}

}  // namespace shardpack
