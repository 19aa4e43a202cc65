// The training loader: see include/shardpack/loader.h for the contract.
//
// Threads: the caller's (Next, StartEpoch), one producer thread per epoch, and oneTBB workers that
// fill batches with it. Slots (batch buffers) move between four places under mu: free (ready to be
// filled), filling (being filled, in batch order), ready (filled, in batch order) and held (the
// consumer's, until Release).
//
// Why batches are filled two (or, for small batches, more: FillDepth) at a time: a batch's last
// images finish one by one, and a thread with nothing left of its batch would otherwise wait for the
// slowest of them (batches of 8 photos left 2 cores 6% idle so, of 4 photos 12%;
// docs/performance.md). The threads take images one at a time from the oldest
// batch being filled that has any left, so the next batch's images start as soon as a thread runs
// out, and batches still finish in order nearly always; the one that finishes last hands out every
// finished batch ahead of those still filling, so they reach `ready` in batch order whatever the
// timing.
#include "shardpack/loader.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <new>
#include <opencv2/imgproc.hpp>
#include <random>
#include <thread>

#include "ground/checked_size.h"
#include "ground/checksum.h"
#include "ground/image_decode_rgb.h"
#include "ground/label_mask.h"
#include "ground/mirror_rgb.h"
#include "ground/status_of_call.h"
#include "ground/tsan_annotations.h"
#include "ground/units.h"
#include "ground/worker_threads.h"
#include "ops/read/buffered_sample_reader.h"
#include "ops/read/grouped_batch_sampler.h"
#include "ops/read/loader_crop.h"
#include "ops/read/loader_fields.h"
#include "ops/read/loader_groups.h"
#include "ops/read/mixture_reader.h"
#include "ops/read/opened_dataset.h"
#include "ops/read/read_planner.h"
#include "shardpack/dataset_reader.h"
#include "storage/location.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A generator for one sample of one epoch, independent of which thread handles it.
std::mt19937_64 SampleRng(uint64_t seed, uint64_t epoch, uint64_t index) {
  uint64_t z = seed ^ (0x9E3779B97F4A7C15ull * (epoch + 1)) ^ (0xD1B54A32D192ED03ull * (index + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return std::mt19937_64(z ^ (z >> 31));
}

// Writes HWC pixels as patches of p x p pixels (each p rows of p x 3 bytes), the patches row by row:
// what a linear patch embedding takes as (patches, p * p * 3). The sides are multiples of p.
void ScatterPatches(const cv::Mat& hwc, int p, uint8_t* out) {
  const size_t row_bytes = size_t(p) * 3;
  for (int py = 0; py < hwc.rows / p; ++py) {
    for (int px = 0; px < hwc.cols / p; ++px) {
      for (int y = 0; y < p; ++y, out += row_bytes) {
        std::memcpy(out, hwc.ptr<uint8_t>(py * p + y) + size_t(px) * row_bytes, row_bytes);
      }
    }
  }
}

// Splits HWC pixels into 3 planes (CHW) at out.
void SplitPlanes(const cv::Mat& hwc, uint8_t* out) {
  const size_t plane = size_t(hwc.rows) * hwc.cols;
  for (int y = 0; y < hwc.rows; ++y) {
    const uint8_t* in = hwc.ptr<uint8_t>(y);
    uint8_t* r = out + size_t(y) * hwc.cols;
    for (int x = 0; x < hwc.cols; ++x, in += 3) {
      r[x] = in[0];
      r[plane + x] = in[1];
      r[2 * plane + x] = in[2];
    }
  }
}

// A batch while it is filled: what its images need beside the Batch, and how far the threads are.
struct BatchFill {
  uint64_t epoch = 0;
  // Each image's random crop is drawn from first_position + i with a mixture or buckets, else from
  // its index (FillImage).
  uint64_t first_position = 0;
  const Bucket* bucket = nullptr;  // the batch's bucket, or null
  size_t per_mask = 0;             // bytes of an image's mask, 0 without one
  std::vector<size_t> image_at;    // where each image's bytes start (count + 1 entries, the last the end)
  std::vector<Status> errors;      // each image's
  // Under Impl::mu: the next image a thread may take, the images not finished yet, the seconds the
  // threads spent on its images.
  uint32_t next = 0;
  uint32_t left = 0;
  double thread_seconds = 0;
};

struct Slot {
  uint8_t* data = nullptr;
  size_t capacity = 0;
  uint8_t* mask_data = nullptr;  // with LoaderOptions::mask
  size_t mask_capacity = 0;
  Batch batch;
  BatchFill fill;
};

// The crop a sample's image was given, kept for its mask. One pointer for the chooser to capture.
struct CropChoice {
  const LoaderOptions* options;
  std::mt19937_64* rng;
  // The size the image is scaled to cover and cut to: the batch's bucket, or a token budget's
  // patched size; null: the options' crop.
  const Bucket* cover;
  cv::Size full;  // the image's oriented size
  CropPlan plan;
};

CropPlan ChooseCrop(const CropChoice& c, cv::Size full) {
  return c.cover != nullptr ? BucketCropPlan(*c.cover, !c.options->eval, c.rng, full)
                            : LoaderCropPlan(*c.options, c.rng, full);
}

}  // namespace

struct Loader::Impl {
  LoaderOptions options;
  std::unique_ptr<DatasetReader> reader;
  // The streaming shuffle over shards that arrive over a network: `reader` itself, which keeps the
  // samples that wait in the shuffle buffer once the stream has left their shard (the planner's
  // drains), so that the shard can go. Null otherwise.
  BufferedSampleReader* buffered = nullptr;
  // A reader that wants a plan (a remote dataset): the producer's, for the epoch it makes.
  std::unique_ptr<ReadPlanner> planner;
  std::vector<std::string> warnings;
  EpochSampler sampler;  // used by the producer thread only
  // With buckets: the epoch's batches (the producer's, and the caller's between epochs); `sampler`
  // then only gives the order.
  std::unique_ptr<GroupedBatchSampler> bucketed;
  // With a token budget: each sample's patch grid (PatchGrid), for the batch's layout.
  GroupColumn<uint32_t> patch_grid;
  std::string groups_origin;                   // Loader::sample_groups_origin
  uint64_t bucket_left_out = 0;                // Loader::bucket_left_out
  uint64_t epoch = 0;                          // the last started
  std::shared_ptr<const MixturePlan> mixture;  // a mixture's plan, or null for one dataset
  std::vector<std::vector<uint64_t>> source_shard_sizes;
  std::unique_ptr<tbb::task_arena> arena;
  // The workers' tasks (RunWorker), each taking images until none is left to take; waited for
  // before the producer thread ends, since they fill the slots.
  tbb::task_group workers;
  size_t batch_bytes = 0;
  std::vector<Slot> slots;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> free, filling, ready;
  uint32_t running_workers = 0;           // RunWorker tasks queued or running
  bool failed = false;                    // a batch failed: no image is taken, no batch handed out
  Clock::time_point filling_since;        // when `filling` last became non-empty
  std::vector<bool> held;                 // slots the consumer holds (Acquire until Release)
  long next_held = -1;                    // the slot Next() handed out, released by the following Next()
  bool producer_waiting = false;          // the producer waits for a free slot, no batch being filled
  bool finished = false;                  // the producer has queued the epoch's last batch
  bool stop = false;                      // the producer must stop
  Status error;                           // the producer's error, handed out by Next()
  std::vector<std::string> skip_reports;  // samples skipped since the last TakeSkipReports()
  std::thread producer;

  std::atomic<uint64_t> images{0}, bytes_read{0}, corrupt{0}, read_ns{0}, decode_ns{0};
  uint64_t batches = 0;
  double produce_seconds = 0, wait_seconds = 0;
  Clock::time_point epoch_start = Clock::now();

  ~Impl() {
    StopProducer();
    for (Slot& s : slots) {
      FreeBuffer(s.data, s.capacity);
      FreeBuffer(s.mask_data, s.mask_capacity);
    }
  }

  // nullptr when the memory is not there (an allocator may throw instead): the caller turns it
  // into an error naming the size. The loader's own buffers start on a 64-byte boundary, a cache
  // line, which is also what XLA asks of a host buffer it takes without a copy (JAX's from_dlpack;
  // new[] gives 16). aligned_alloc wants a size that is a multiple of the alignment.
  uint8_t* AllocateBuffer(size_t bytes) {
    try {
      if (options.allocator.allocate) return options.allocator.allocate(bytes);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    return static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, rounded == 0 ? kBufferAlignment : rounded));
  }

  void FreeBuffer(uint8_t* data, size_t bytes) {
    if (data == nullptr) return;
    if (options.allocator.free)
      options.allocator.free(data, bytes);
    else if (options.allocator.allocate)
      delete[] data;  // (an allocator without its free: new[]'s, as documented in loader.h)
    else
      std::free(data);
  }

  static constexpr size_t kBufferAlignment = 64;

  void StopProducer() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    if (producer.joinable()) producer.join();
  }

  // Decodes and transforms sample `index` into `out` (H x W x 3, or 3 planes for NCHW), and its
  // mask, with the same crop and flip, into `mask_out` (H x W) when one is asked for.
  // `draw` seeds the sample's crop and flip: its index, or for a mixture its position in the epoch.
  Status FillSample(uint64_t epoch, uint64_t index, uint64_t draw, const Bucket* cover, uint8_t* out, uint8_t* mask_out,
                    int32_t* label, std::string* key) {
    thread_local ReadSample sample;
    const auto t0 = Clock::now();
    Status s = reader->Read(index, &sample);
    const auto t1 = Clock::now();
    read_ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    if (!s.ok()) return s;
    // Neither bytes nor pixels: a reader of another tool's files (Parquet) that let an empty image
    // through would otherwise reach OpenCV as a 0x0 image.
    if (sample.encoded.empty() && sample.pixels.rgb.empty()) return Status::Corrupt("its image is empty (0 bytes)");
    *label = sample.label;
    *key = sample.key;
    bytes_read += sample.encoded.empty() ? sample.pixels.rgb.size() : sample.encoded.size();
    const int H = int(cover != nullptr ? cover->height : options.height);
    const int W = int(cover != nullptr ? cover->width : options.width);
    thread_local cv::Mat hwc;
    const bool staged = options.nchw || options.patch > 0;  // written to `out` rearranged
    cv::Mat dst = staged ? (hwc.create(H, W, CV_8UC3), hwc) : cv::Mat(H, W, CV_8UC3, out);
    std::mt19937_64 rng = SampleRng(options.sampler.seed, epoch, draw);
    CropChoice choice{&options, &rng, cover, {}, {}};
    try {
      if (!sample.encoded.empty()) {
        // Training crops are drawn on the full size; only the crop is decoded, coarse enough to cover the output.
        s = DecodeCrop(
            sample.encoded, options.max_pixels,
            [&choice](cv::Size full) {
              choice.full = full;
              choice.plan = ChooseCrop(choice, full);
              return choice.plan;
            },
            options.fast_decode && !options.eval, &dst);
        if (!s.ok()) return s;
      } else {
        const cv::Mat rgb(int(sample.pixels.height), int(sample.pixels.width), CV_8UC3, sample.pixels.rgb.data());
        choice.full = rgb.size();
        choice.plan = ChooseCrop(choice, rgb.size());
        if (rgb.rows == H && rgb.cols == W && options.eval) {
          rgb.copyTo(dst);  // already the right size (raw shards packed for this crop)
          choice.plan.box = cv::Rect2d(0, 0, W, H);
        } else {
          ResizeCrop(rgb, choice.plan, &dst);
        }
      }
      const bool flip = !options.eval && Uniform(rng, 0, 1) < options.flip;
      if (flip) MirrorRgbInPlace(&dst);
      if (options.patch > 0) {
        ScatterPatches(dst, int(options.patch), out);
      } else if (options.nchw) {
        SplitPlanes(dst, out);
      }
      if (mask_out != nullptr) {
        SHARDPACK_RETURN_IF_ERROR(FillMask(index, *key, choice, flip, sample.encoded.empty(), dst.size(), mask_out));
      }
    } catch (const cv::Exception& e) {
      return Status::Corrupt(std::string("cannot transform sample: ") + e.what());
    }
    decode_ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t1).count());
    return Status::OK();
  }

  // Sample `index`'s mask, given the crop and flip its image got, into `out` (H x W). stored: the
  // image came as stored pixels (raw), and so does its mask, cut as the image was at pack time.
  Status FillMask(uint64_t index, const std::string& key, const CropChoice& choice, bool flip, bool stored,
                  cv::Size size, uint8_t* out) {
    thread_local std::string bytes;
    thread_local cv::Mat mask;
    bool present = false;
    const auto t0 = Clock::now();
    SHARDPACK_RETURN_IF_ERROR(stored ? reader->ReadMaskPixels(index, options.mask, &bytes, &present)
                                     : reader->ReadField(index, options.mask, &bytes, &present));
    read_ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    const std::string sample = "sample " + key + " (index " + std::to_string(index) + ")";
    if (!present) return Status::Corrupt(sample + " has no mask field '" + options.mask + "'");
    bytes_read += bytes.size();
    cv::Mat wrapped;  // stored: the pixels as read, of the image's size (ReadMaskPixels says so)
    if (stored) {
      wrapped = cv::Mat(choice.full, CV_8UC1, bytes.data());
    } else {
      const Status s = DecodeLabelMask(bytes, choice.full, options.max_pixels, &mask);
      if (!s.ok()) return Status::Corrupt(sample + ", field '" + options.mask + "': " + s.message());
    }
    cv::Mat dst(size, CV_8UC1, out);
    CropLabelMask(stored ? wrapped : mask, choice.plan, &dst);
    if (flip) cv::flip(dst, dst, 1);
    return Status::OK();
  }

  // The requested fields of sample `index` into row i of batch->fields (rows of one batch are
  // filled by different threads; none resizes the columns).
  Status ReadFields(uint64_t index, uint32_t i, Batch* batch) {
    thread_local std::string data;
    const auto t0 = Clock::now();
    for (size_t f = 0; f < options.fields.size(); ++f) {
      bool present = false;
      SHARDPACK_RETURN_IF_ERROR(reader->ReadField(index, options.fields[f], &data, &present));
      if (present) {
        batch->fields[f][i] = data;
        bytes_read += data.size();
      } else if (options.require_fields) {
        return Status::InvalidArgument("sample " + batch->keys[i] + " (index " + std::to_string(index) +
                                       ") has no field '" + options.fields[f] + "', and require_fields is set");
      }
    }
    read_ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    return Status::OK();
  }

  // Sets up batch b of `epoch` in `slot` for its images to be filled (FillImage): its samples, its
  // layout in the buffer, its labels and keys emptied. The producer thread's, one batch at a time.
  void PrepareBatch(uint64_t epoch, uint64_t b, Slot* slot) {
    Batch& batch = slot->batch;
    BatchFill& fill = slot->fill;
    batch.epoch = epoch;
    batch.index = b;
    fill.epoch = epoch;
    // Each image's random crop is drawn from its first_position + i: the order's position for a
    // mixture (whose small sources repeat samples), the global batch's for buckets.
    uint64_t end_position = 0;
    fill.first_position = 0;
    fill.bucket = nullptr;
    batch.bucket = -1;
    if (bucketed != nullptr) {
      uint32_t k = 0;
      uint64_t global = 0;
      bucketed->Batch(epoch, b, &batch.indices, &k, &global);
      if (options.patch == 0) {
        fill.bucket = &options.buckets[k];
        batch.bucket = int32_t(k);
      }
      // (A batch holds at most batch_size images, or tokens_per_batch under a budget.)
      fill.first_position = global * std::max<uint64_t>(options.sampler.batch_size, options.tokens_per_batch);
    } else {
      sampler.Batch(epoch, b, &batch.indices);
      sampler.BatchRange(b, &fill.first_position, &end_position);
    }
    batch.count = static_cast<uint32_t>(batch.indices.size());
    // Where each image's bytes go (image_at, reused batch to batch): images of one size, or a token
    // budget's images each of its own (batch.sizes, token_offsets; no single height and width).
    std::vector<size_t>& image_at = fill.image_at;
    image_at.assign(size_t(batch.count) + 1, 0);
    batch.sizes.clear();
    batch.token_offsets.clear();
    if (options.patch > 0) {
      batch.height = batch.width = 0;
      batch.token_offsets.push_back(0);
      const size_t per_token = size_t(options.patch) * options.patch * 3;
      for (uint32_t i = 0; i < batch.count; ++i) {
        const uint32_t grid = patch_grid[batch.indices[i]];
        batch.sizes.insert(batch.sizes.end(), {GridRows(grid) * options.patch, GridColumns(grid) * options.patch});
        batch.token_offsets.push_back(batch.token_offsets.back() + uint64_t(GridColumns(grid)) * GridRows(grid));
        image_at[i + 1] = batch.token_offsets.back() * per_token;
      }
    } else {
      batch.height = fill.bucket != nullptr ? fill.bucket->height : options.height;
      batch.width = fill.bucket != nullptr ? fill.bucket->width : options.width;
      for (uint32_t i = 0; i <= batch.count; ++i) image_at[i] = size_t(batch.height) * batch.width * 3 * i;
    }
    batch.sources.assign(batch.count, 0);
    if (mixture != nullptr) {
      for (uint32_t i = 0; i < batch.count; ++i) batch.sources[i] = mixture->SourceOf(batch.indices[i]);
    }
    batch.labels.assign(batch.count, -1);
    batch.keys.resize(batch.count);
    batch.fields.resize(options.fields.size());
    for (std::vector<std::optional<std::string>>& column : batch.fields) column.assign(batch.count, std::nullopt);
    batch.image_bytes = image_at[batch.count];
    batch.images = slot->data;
    fill.per_mask = options.mask.empty() ? 0 : size_t(batch.height) * batch.width;
    batch.masks = slot->mask_data;
    batch.mask_bytes = fill.per_mask * batch.count;
    fill.errors.assign(batch.count, Status::OK());
    fill.next = 0;
    fill.left = batch.count;
    fill.thread_seconds = 0;
  }

  // Fills image i of the batch in `slot` (any thread; each image is one thread's): its pixels, mask,
  // label, key and fields, or its error, with its bytes zeroed. An exception (an allocation failing
  // deep in a decoder) is that image's error: it never leaves a worker's task.
  void FillImage(Slot* slot, uint32_t i) {
    Batch& batch = slot->batch;
    BatchFill& fill = slot->fill;
    uint8_t* out = slot->data + fill.image_at[i];
    uint8_t* mask_out = fill.per_mask == 0 ? nullptr : slot->mask_data + fill.per_mask * i;
    const bool grouped = mixture != nullptr || bucketed != nullptr;
    const uint64_t draw = grouped ? fill.first_position + i : batch.indices[i];
    Status& error = fill.errors[i];
    error = StatusOfCall("the loader's decode threads", [&] {
      const Bucket patched = options.patch == 0 ? Bucket() : Bucket{batch.sizes[2 * i + 1], batch.sizes[2 * i]};
      const Bucket* cover = options.patch == 0 ? fill.bucket : &patched;
      Status s = FillSample(fill.epoch, batch.indices[i], draw, cover, out, mask_out, &batch.labels[i], &batch.keys[i]);
      if (s.ok() && !options.fields.empty()) s = ReadFields(batch.indices[i], i, &batch);
      return s;
    });
    if (!error.ok()) {
      std::memset(out, 0, fill.image_at[i + 1] - fill.image_at[i]);
      if (mask_out != nullptr) std::memset(mask_out, 0, fill.per_mask);
      for (std::vector<std::optional<std::string>>& column : batch.fields) column[i].reset();
    }
  }

  // After its last image: the batch's skipped samples reported and left out, or its first error
  // that skip_corrupt does not cover returned. Under mu (mu is held: skip_reports is appended).
  Status FinishBatch(Slot* slot) {
    Batch& batch = slot->batch;
    const BatchFill& fill = slot->fill;
    std::vector<std::string> skipped;
    for (uint32_t i = 0; i < batch.count; ++i) {
      const Status& error = fill.errors[i];
      if (error.ok()) continue;
      const Status::Code code = error.code();
      const bool damaged = code == Status::Code::kCorrupt || code == Status::Code::kDataLoss;
      if (!options.skip_corrupt || !damaged) return error;
      const std::string& why = error.message();
      // (Messages that already name the sample are not prefixed with its name again.)
      skipped.push_back("skipped " + (why.rfind("sample ", 0) == 0
                                          ? why
                                          : "sample " + (batch.keys[i].empty() ? "" : batch.keys[i] + " ") + "(index " +
                                                std::to_string(batch.indices[i]) + "): " + why));
    }
    if (!skipped.empty()) LeaveOut(fill.errors, fill.image_at, fill.per_mask, &batch);
    images += batch.count;
    corrupt += skipped.size();
    for (std::string& line : skipped) skip_reports.push_back(std::move(line));
    return Status::OK();
  }

  // Removes the samples whose fill failed from `batch`, moving the others up in order: a skipped
  // sample is not in its batch at all (no zeros labelled -1 for a loss function to trip on). The
  // batch is smaller by as many; which samples those are depends on the data alone, so a resumed
  // epoch skips the same ones and its batches stay exactly those of an uninterrupted run.
  // image_at: where each image's bytes start (count + 1 entries, the last the end): images of one
  // size, or a token budget's images of their own sizes (whose sizes and token_offsets follow).
  static void LeaveOut(const std::vector<Status>& errors, const std::vector<size_t>& image_at, size_t per_mask,
                       Batch* batch) {
    uint8_t* images = const_cast<uint8_t*>(batch->images);
    uint8_t* masks = const_cast<uint8_t*>(batch->masks);
    uint32_t kept = 0;
    size_t kept_bytes = 0;
    const bool patched = !batch->token_offsets.empty();
    for (uint32_t i = 0; i < batch->count; ++i) {
      if (!errors[i].ok()) continue;
      const size_t bytes = image_at[i + 1] - image_at[i];
      if (kept != i) {
        std::memmove(images + kept_bytes, images + image_at[i], bytes);
        if (patched) {
          batch->sizes[2 * kept] = batch->sizes[2 * i];
          batch->sizes[2 * kept + 1] = batch->sizes[2 * i + 1];
          batch->token_offsets[kept + 1] =
              batch->token_offsets[kept] + (batch->token_offsets[i + 1] - batch->token_offsets[i]);
        }
        if (masks != nullptr) std::memmove(masks + per_mask * kept, masks + per_mask * i, per_mask);
        batch->labels[kept] = batch->labels[i];
        batch->keys[kept] = std::move(batch->keys[i]);
        batch->indices[kept] = batch->indices[i];
        batch->sources[kept] = batch->sources[i];
        for (std::vector<std::optional<std::string>>& column : batch->fields) column[kept] = std::move(column[i]);
      }
      kept_bytes += bytes;
      ++kept;
    }
    if (patched) {
      batch->sizes.resize(2 * size_t(kept));
      batch->token_offsets.resize(size_t(kept) + 1);
    }
    batch->count = kept;
    batch->labels.resize(kept);
    batch->keys.resize(kept);
    batch->indices.resize(kept);
    batch->sources.resize(kept);
    for (std::vector<std::optional<std::string>>& column : batch->fields) column.resize(kept);
    batch->image_bytes = kept_bytes;
    batch->mask_bytes = per_mask * kept;
  }

  uint64_t WorkerBatches(uint64_t e) const {
    return bucketed != nullptr ? bucketed->worker_batches(e) : sampler.worker_batches();
  }

  // A reader that wants it (a remote dataset) is told which shards the epoch reads from first_batch
  // on, a window of batches at a time (ops/read/read_planner.h): it downloads ahead in that order.
  void StartReadPlan(uint64_t epoch, uint64_t first_batch) {
    planner.reset();
    if (buffered != nullptr) buffered->Clear();
    if (!reader->wants_read_plan()) return;
    const ShardTable& shards = reader->manifest().shards;
    // A window spans many more shards than are downloaded ahead, so that the plan is always ahead.
    const uint64_t ahead = std::max<uint64_t>(64, 2 * uint64_t(options.remote.prefetch_shards));
    const uint64_t window = options.read_plan_batches > 0
                                ? options.read_plan_batches
                                : ReadPlanner::Window(reader->size(), shards.size(), options.sampler, ahead);
    planner = std::make_unique<ReadPlanner>(sampler, shards, options.sampler, buffered != nullptr, epoch, first_batch,
                                            window);
  }

  // Before batch b: a new plan for the reader when b starts a window.
  void PlanReads(uint64_t b) {
    if (planner == nullptr) return;
    std::vector<ShardUse> uses;
    uint64_t position = 0;
    if (planner->Advance(b, &uses, &position)) reader->PlanReads(std::move(uses), position);
  }

  // Keeps the samples batch b is the first to find waiting in the buffer for a shard the stream has
  // left (the planner's drains): shard by shard, each read in parallel, each telling the reader
  // where the reads have got, so that the shard before can go.
  void KeepWaitingSamples(uint64_t b) {
    if (buffered == nullptr || planner == nullptr) return;
    // ThreadSanitizer tokens, as in FillBatch: the tasks read what this thread set up.
    static const char start = 0, finish = 0;
    BufferedSampleReader* const keeper = buffered;
    for (const ReadPlanner::Drain& d : planner->TakeDrains(b)) {
      reader->ReachedPosition(d.position);
      const auto keep = [&](size_t i) {
        HappensAfter(&start);
        keeper->Keep(d.indices[i]);
        HappensBefore(&finish);
      };
      HappensBefore(&start);
      arena->execute([&] { tbb::parallel_for(size_t(0), d.indices.size(), keep); });
      HappensAfter(&finish);
    }
  }

  // The producer thread's body: an exception (an allocation that fails, a library's) ends the epoch
  // with an error that Next() hands out, never the process. The workers' tasks are waited for before
  // it returns, whatever happened: they write into the slots, which outlive only the producer.
  void Produce(uint64_t epoch, uint64_t first_batch) {
    const Status s = StatusOfCall("the loader's producer thread", [&] {
      ProduceBatches(epoch, first_batch);
      return Status::OK();
    });
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (error.ok()) error = s;
      failed = finished = true;
    }
    cv.notify_all();
    arena->execute([&] { workers.wait(); });  // (RunWorker lets no exception out)
    HappensAfter(&kWorkerEnd);
  }

  // Batches filled at once: two, so that threads run on into the next batch while the last images
  // of one finish; one where the reader wants batches in order (a remote dataset's read plan, the
  // streaming buffer keeping samples for the batch it is at). More where batches hold few images
  // for the threads: while the oldest batch's slowest image is decoded, the batches behind it should
  // hold twice as many images as there are threads (2 photos a batch on 2 threads left the second
  // thread waiting behind one large photo once the next batch's two were done: 95% busy; three
  // at once: 99.5%). Never more than the slots the consumer does not hold; memory stays (prefetch + 2)
  // batches.
  size_t FillDepth() const {
    if (reader->wants_read_plan() || buffered != nullptr) return 1;
    const size_t images = options.patch > 0 ? 0 : size_t(options.sampler.batch_size);  // (a budget's vary)
    if (images == 0) return 2;
    const size_t threads = size_t(std::max(1, arena->max_concurrency()));
    const size_t wanted = 1 + (2 * threads + images - 1) / images;
    return std::max<size_t>(2, std::min(wanted, slots.size() - 1));
  }

  void ProduceBatches(uint64_t epoch, uint64_t first_batch) {
    StartReadPlan(epoch, first_batch);
    const uint64_t batches = WorkerBatches(epoch);
    const size_t depth = FillDepth();
    uint64_t b = first_batch;
    bool planned = false;  // PlanReads(b) was called
    for (;;) {
      if (b < batches && !planned) {
        PlanReads(b);  // (before waiting for a slot: the downloads start while the consumer works)
        planned = true;
      }
      size_t slot = 0;
      uint32_t image = 0;
      bool start = false;  // start batch b in `slot`; else fill `image` of `slot`
      {
        std::unique_lock<std::mutex> lock(mu);
        for (;;) {
          if (stop || failed) return;
          if (b < batches && filling.size() < depth && !free.empty()) {
            slot = free.front();
            free.pop_front();
            start = true;
            break;
          }
          if (TakeImage(&slot, &image)) break;
          if (b >= batches && filling.empty()) {
            finished = true;
            cv.notify_all();
            return;
          }
          // Nothing to take: every image of the batches being filled is taken, or the consumer
          // holds every slot (Acquire tells it so when nothing is being filled either).
          producer_waiting = filling.empty();
          cv.notify_all();
          cv.wait(lock);
          producer_waiting = false;
        }
      }
      if (start) {
        StartBatch(epoch, b++, slot);
        planned = false;
      } else {
        FillAndFinish(&slots[slot], image);
      }
    }
  }

  // Starts batch b in `slot`: the samples waiting in a streaming buffer kept first (depth 1: the
  // batch before is done), then the batch set up and queued for the threads, workers asked for.
  void StartBatch(uint64_t epoch, uint64_t b, size_t slot) {
    KeepWaitingSamples(b);
    if (planner != nullptr) reader->ReachedPosition(planner->BatchPosition(b));
    PrepareBatch(epoch, b, &slots[slot]);
    const uint32_t threads = uint32_t(arena->max_concurrency());
    uint32_t wanted = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (filling.empty()) filling_since = Clock::now();
      filling.push_back(slot);
      if (slots[slot].fill.left == 0) FinishFilledBatches();  // (no samples: nothing to fill)
      // The producer fills too: threads - 1 workers make every thread busy.
      while (running_workers + wanted + 1 < threads) ++wanted;
      running_workers += wanted;
    }
    HappensBefore(&kWorkerStart);
    for (uint32_t w = 0; w < wanted; ++w) arena->enqueue(workers.defer([this] { RunWorker(); }));
  }

  // ThreadSanitizer tokens (ground/tsan_annotations.h): a worker's task sees what was done before
  // it was queued, and the end of `workers.wait()` sees everything a task did.
  static constexpr char kWorkerStart = 0, kWorkerEnd = 0;

  // A worker's task: images, one at a time, until none is left to take.
  void RunWorker() {
    HappensAfter(&kWorkerStart);
    for (;;) {
      size_t slot = 0;
      uint32_t image = 0;
      bool took = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        took = TakeImage(&slot, &image);
        if (!took) --running_workers;
      }
      if (!took) break;
      FillAndFinish(&slots[slot], image);
    }
    HappensBefore(&kWorkerEnd);
  }

  // The next image to fill: the oldest batch being filled with one not yet taken. Under mu.
  bool TakeImage(size_t* slot, uint32_t* image) {
    if (stop || failed) return false;
    for (const size_t s : filling) {
      BatchFill& fill = slots[s].fill;
      if (fill.next < slots[s].batch.count) {
        *slot = s;
        *image = fill.next++;
        return true;
      }
    }
    return false;
  }

  void FillAndFinish(Slot* slot, uint32_t image) {
    const auto t0 = Clock::now();
    FillImage(slot, image);
    const double seconds = Since(t0);
    std::lock_guard<std::mutex> lock(mu);
    slot->fill.thread_seconds += seconds;
    if (--slot->fill.left == 0) FinishFilledBatches();
  }

  // Hands out the batches at the front of `filling` whose every image is done, in batch order: the
  // thread that finishes a batch's last image finishes it, and those behind it that finished first.
  // Under mu.
  void FinishFilledBatches() {
    while (!filling.empty() && slots[filling.front()].fill.left == 0) {
      const size_t slot = filling.front();
      filling.pop_front();
      if (filling.empty()) produce_seconds += Since(filling_since);
      Batch& batch = slots[slot].batch;
      // Its share of the threads' time (with two batches filled at once, wall times overlap).
      batch.fill_seconds = slots[slot].fill.thread_seconds / std::max(1, arena->max_concurrency());
      if (failed || stop) {
        free.push_back(slot);
        continue;
      }
      const Status s = FinishBatch(&slots[slot]);
      if (buffered != nullptr) {
        for (const uint64_t index : batch.indices) buffered->Forget(index);
      }
      if (!s.ok()) {
        error = s;
        failed = finished = true;
        free.push_back(slot);
      } else if (batch.count == 0) {
        // A batch whose every sample was skipped is not handed out (the consumer's batch numbers
        // follow Batch::index, so resume still counts it).
        free.push_back(slot);
      } else {
        ready.push_back(slot);
      }
    }
    cv.notify_all();
  }
};

namespace {

// A global shuffle reads every shard all epoch long: over a remote dataset larger than the cache's
// bound, the cache holds only part of what is read at any time, and shards are downloaded again
// and again (about dataset / limit times an epoch, for a uniform shuffle).
std::vector<std::string> OpenWarnings(const std::string& dataset, const DatasetReader& reader, const LoaderOptions& o) {
  std::vector<std::string> warnings;
  const uint64_t limit = o.remote.cache_limit;
  if (!reader.wants_read_plan() || limit == 0 || !o.sampler.shuffle || o.sampler.shuffle_buffer > 0) return warnings;
  uint64_t total = 0;
  const ShardTable& shards = reader.manifest().shards;
  for (size_t i = 0; i < shards.size(); ++i) total += shards.bytes(i);
  if (total <= limit) return warnings;
  warnings.push_back("a global shuffle of " + dataset + " reads its " + std::to_string(shards.size()) + " shards (" +
                     FormatBytes(total) + ") all epoch long, but --cache-limit holds " + FormatBytes(limit) +
                     ": shards will be downloaded again and again. Use the streaming shuffle (--shuffle-buffer N), "
                     "which reads each shard once an epoch within the limit, or a --cache-limit "
                     "of at least " +
                     FormatBytes(total));
  return warnings;
}

}  // namespace

const std::string& Loader::sample_groups_origin() const { return impl_->groups_origin; }
uint64_t Loader::bucket_left_out() const { return impl_->bucket_left_out; }

const std::vector<std::string>& Loader::warnings() const { return impl_->warnings; }

bool Loader::reads_decoded_images() const {
  return impl_->mixture == nullptr && impl_->reader->manifest().format == DatasetFormat::kRaw;
}

std::string Loader::DatasetFingerprint() const {
  std::string described;
  const ShardTable& shards = impl_->reader->manifest().shards;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (shards.xxh64(i).empty()) {
      described.append(shards.file(i)).append(" " + std::to_string(shards.bytes(i)));
    } else {
      described.append(shards.xxh64(i));
    }
    described += " " + std::to_string(shards.samples(i)) + "\n";
  }
  return ChecksumHex(Xxh64(described));
}

uint64_t Loader::DatasetGeneration() const {
  return impl_->mixture == nullptr ? impl_->reader->manifest().generation : 0;
}

std::vector<std::string> Loader::TakeSkipReports() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return std::exchange(impl_->skip_reports, {});
}

const std::vector<std::vector<uint64_t>>& Loader::source_shard_sizes() const { return impl_->source_shard_sizes; }

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::~Loader() = default;

namespace {

// A token budget's options (LoaderOptions::patch), each refusal with the way out.
Status CheckTokenBudget(const LoaderOptions& o) {
  const std::string p = std::to_string(o.patch), m = std::to_string(o.max_side);
  if (!o.buckets.empty()) {
    return Status::InvalidArgument("buckets and a token budget (patch) are two ways to make batches: give one");
  }
  if (o.max_side == 0) {
    return Status::InvalidArgument(
        "a token budget needs max_side, the longest side an image is resized to (a "
        "multiple of patch " +
        p + ")");
  }
  if (o.max_side % o.patch != 0) {
    return Status::InvalidArgument("patch " + p + " does not divide max_side " + m + ": give a max_side that is a " +
                                   "multiple of the patch size, such as " +
                                   std::to_string(std::max(o.patch, o.max_side / o.patch * o.patch)));
  }
  if (o.max_side / o.patch > 0xFFFF) return Status::InvalidArgument("max_side " + m + " is over 65,535 patches");
  const uint64_t largest = uint64_t(o.max_side / o.patch) * (o.max_side / o.patch);
  if (o.tokens_per_batch < largest) {
    return Status::InvalidArgument("tokens_per_batch " + std::to_string(o.tokens_per_batch) +
                                   " is smaller than one image of max_side " + m + " (" + std::to_string(largest) +
                                   " patches of " + p + "): raise tokens_per_batch to at least " +
                                   std::to_string(largest) + ", or lower max_side");
  }
  if (!o.mask.empty()) return Status::InvalidArgument("masks with a token budget: not yet; read masks without patch");
  if (o.sampler.drop_last) {
    return Status::InvalidArgument(
        "drop_last with a token budget: batches are made to the budget and every one "
        "is kept; leave drop_last off");
  }
  return Status::OK();
}

// The bytes of one batch buffer, and of one mask buffer (0 without masks). Every factor is a number
// the user gave, so each product is checked: a wrapped one would allocate a small buffer that the
// decoders write past. Over kMaxBatchBytes is refused with the option to lower.
Status SizeBatchBuffers(const LoaderOptions& o, size_t* batch_bytes, size_t* mask_bytes) {
  const uint64_t cap = kMaxBatchBytes;
  uint64_t bytes = 0, pixels = 0;
  std::string what, lower;
  if (o.patch > 0) {
    const bool fits = CheckedProduct({o.tokens_per_batch, o.patch, o.patch, 3}, &bytes);
    what = "tokens_per_batch " + std::to_string(o.tokens_per_batch) + " of patches " + std::to_string(o.patch) + "x" +
           std::to_string(o.patch) + " x 3 channels";
    lower = "lower tokens_per_batch";
    if (!fits) bytes = UINT64_MAX;
    pixels = 0;
  } else {
    pixels = o.buckets.empty() ? uint64_t(o.height) * o.width : LargestBucketPixels(o.buckets);
    const bool fits = CheckedProduct({pixels, 3, o.sampler.batch_size}, &bytes);
    if (!fits) bytes = UINT64_MAX;
    what = "batch_size " + std::to_string(o.sampler.batch_size) + " of " +
           (o.buckets.empty() ? std::to_string(o.height) + "x" + std::to_string(o.width) + " images"
                              : "images up to the largest bucket (" + std::to_string(pixels) + " pixels)") +
           " x 3 channels";
    lower = o.buckets.empty() ? "lower batch_size or the image size" : "lower batch_size or use smaller buckets";
  }
  if (bytes > cap) {
    return Status::InvalidArgument(
        what + " makes batches of " + (bytes == UINT64_MAX ? std::string("more than 2^64 bytes") : FormatBytes(bytes)) +
        ", over the " + std::to_string(cap >> 30) + " GiB one batch may hold (kMaxBatchBytes): " + lower);
  }
  *batch_bytes = size_t(bytes);
  // A mask is one byte a pixel: a third of the images' bytes, so it fits when they do.
  *mask_bytes = o.mask.empty() || o.patch > 0 ? 0 : size_t(bytes / 3);
  return Status::OK();
}

// What can be checked before a dataset is opened (downloaded, for a URL).
Status CheckLoaderOptions(const LoaderOptions& options) {
  if (options.height == 0 || options.width == 0)
    return Status::InvalidArgument("image height and width must be above zero");
  if (options.buckets.size() > kMaxLoaderBuckets) {
    return Status::InvalidArgument(std::to_string(options.buckets.size()) + " buckets: the loader takes at most " +
                                   std::to_string(kMaxLoaderBuckets) + "; use a larger step or a narrower max-ratio");
  }
  for (const Bucket& b : options.buckets) {
    if (b.width == 0 || b.height == 0) return Status::InvalidArgument("a bucket has a side of 0 pixels");
  }
  if (options.patch > 0) SHARDPACK_RETURN_IF_ERROR(CheckTokenBudget(options));
  size_t batch_bytes = 0, mask_bytes = 0;
  SHARDPACK_RETURN_IF_ERROR(SizeBatchBuffers(options, &batch_bytes, &mask_bytes));
  if (options.prefetch > kMaxPrefetch) {  // each is a batch buffer; more only waits longer
    return Status::InvalidArgument("prefetch " + std::to_string(options.prefetch) + " is over " +
                                   std::to_string(kMaxPrefetch) + " batches: lower prefetch (2 to 8 keeps a GPU fed)");
  }
  if (options.buckets.empty() && options.bucket_choice.any()) {
    return Status::InvalidArgument(
        "bucket_no_upscale and bucket_min_side choose among buckets: give buckets too (e.g. buckets=\"sdxl\")");
  }
  if (!options.buckets.empty() && options.sampler.drop_last) {
    return Status::InvalidArgument(
        "drop_last with buckets: each bucket has a last batch, and bucket_tail says what becomes of them "
        "(bucket_tail=drop leaves them out)");
  }
  return EpochSampler::CheckOptions(options.sampler);
}

}  // namespace

Status Loader::Open(const std::string& dataset, const LoaderOptions& options, std::unique_ptr<Loader>* loader) {
  SHARDPACK_RETURN_IF_ERROR(CheckLoaderOptions(options));
  RemoteOptions remote = options.remote;
  // Reads that go through the shards front to back can stream them without a cache folder.
  remote.sequential = !options.sampler.shuffle || options.sampler.shuffle_buffer > 0;
  std::shared_ptr<const SampleGroups> groups;
  std::vector<SizedDataset> opened;
  SHARDPACK_RETURN_IF_ERROR(LoaderGroups({dataset}, options, &groups, &opened));
  std::unique_ptr<DatasetReader> reader;
  if (!opened.empty() && opened[0].local) {  // (a manifest of 100,000 shards is 34 MB: read once)
    SHARDPACK_RETURN_IF_ERROR(OpenLocalDatasetReader(&opened[0].opened, remote, &reader));
  } else {
    SHARDPACK_RETURN_IF_ERROR(DatasetReader::Open(dataset, options.env, &reader, remote));
  }
  return OpenOver(dataset, std::move(reader), nullptr, {}, std::move(groups), options, loader);
}

Status Loader::Open(const Mixture& mixture, const LoaderOptions& options, std::unique_ptr<Loader>* loader) {
  SHARDPACK_RETURN_IF_ERROR(CheckMixture(mixture));
  SHARDPACK_RETURN_IF_ERROR(CheckLoaderOptions(options));
  if ((!options.buckets.empty() || options.patch > 0) && mixture.per_source_batches) {
    return Status::InvalidArgument(
        "per_source_batches with buckets or a token budget: a batch is made from every source; make each "
        "batch from one source without them, or group without per_source_batches");
  }
  std::vector<std::string> locations;
  for (const MixtureSource& source : mixture.sources) locations.push_back(source.location);
  std::shared_ptr<const SampleGroups> groups;
  std::vector<SizedDataset> opened;  // (each source's reader opens it again: MixtureReader::Open)
  SHARDPACK_RETURN_IF_ERROR(LoaderGroups(locations, options, &groups, &opened));
  std::unique_ptr<MixtureReader> reader;
  SHARDPACK_RETURN_IF_ERROR(MixtureReader::Open(mixture, options, &reader));
  auto plan = std::make_shared<MixturePlan>();
  SHARDPACK_RETURN_IF_ERROR(
      MixturePlan::Create(mixture, reader->source_sizes(), reader->source_shard_sizes(), options.sampler, plan.get()));
  std::vector<std::vector<uint64_t>> shard_sizes = reader->source_shard_sizes();
  const std::vector<std::string> plan_warnings = plan->warnings();
  SHARDPACK_RETURN_IF_ERROR(OpenOver("the mixture", std::move(reader), std::move(plan), std::move(shard_sizes),
                                     std::move(groups), options, loader));
  std::vector<std::string>& warnings = (*loader)->impl_->warnings;
  warnings.insert(warnings.begin(), plan_warnings.begin(), plan_warnings.end());
  return Status::OK();
}

Status Loader::Open(const std::string& name, std::unique_ptr<DatasetReader> reader, const LoaderOptions& options,
                    std::unique_ptr<Loader>* loader) {
  if (!options.buckets.empty() || options.patch > 0) {
    return Status::InvalidArgument("buckets and token budgets need the dataset's location, to read its sizes: open " +
                                   name + " with Loader::Open(location, options)");
  }
  return OpenOver(name, std::move(reader), nullptr, {}, nullptr, options, loader);
}

Status Loader::OpenOver(const std::string& name, std::unique_ptr<DatasetReader> reader,
                        std::shared_ptr<const MixturePlan> mixture,
                        std::vector<std::vector<uint64_t>> source_shard_sizes,
                        std::shared_ptr<const SampleGroups> groups, const LoaderOptions& options,
                        std::unique_ptr<Loader>* loader) {
  SHARDPACK_RETURN_IF_ERROR(CheckLoaderOptions(options));
  if (mixture == nullptr) {  // (a mixture's reader checked each source, naming it)
    const std::string missing = FieldsMissingFor(reader->manifest(), options);
    if (!missing.empty()) return Status::InvalidArgument(name + " " + missing);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->reader = std::move(reader);
  impl->mixture = mixture;
  // (A mixture's sources each stream their own shards: no one stream whose buffer outlives them.)
  if (impl->reader->wants_read_plan() && options.sampler.shuffle && options.sampler.shuffle_buffer > 0 &&
      mixture == nullptr) {
    // The streaming shuffle over a network: samples that wait in the buffer are kept apart from
    // their shards, so that memory follows the buffer's bytes, not the shards'.
    auto buffered = std::make_unique<BufferedSampleReader>(std::move(impl->reader), options.fields, options.mask);
    impl->buffered = buffered.get();
    impl->reader = std::move(buffered);
  }
  const std::vector<uint64_t>& shard_sizes = impl->reader->manifest().shards.sample_counts();  // streaming shuffle
  impl->source_shard_sizes = std::move(source_shard_sizes);
  if (mixture == nullptr) impl->source_shard_sizes = {shard_sizes};  // one dataset: one source
  // With groups the sampler only gives the epoch's order, which does not depend on the ranks.
  SamplerOptions order_options = options.sampler;
  if (groups != nullptr) {
    order_options.rank = order_options.worker = 0;
    order_options.world_size = order_options.num_workers = 1;
  }
  if (mixture != nullptr) {
    SHARDPACK_RETURN_IF_ERROR(EpochSampler::CreateMixture(mixture, order_options, &impl->sampler));
  } else {
    SHARDPACK_RETURN_IF_ERROR(EpochSampler::Create(impl->reader->size(), order_options, &impl->sampler, shard_sizes));
  }
  if (groups != nullptr) {
    const size_t listed = std::max(groups->bucket_of.size(), groups->patch_grid.size());
    if (listed != impl->reader->size()) {
      return Status::DataLoss(name + ": the sample tables list " + std::to_string(listed) + " samples and the reader " +
                              std::to_string(impl->reader->size()));
    }
    if (options.patch > 0) {
      SHARDPACK_RETURN_IF_ERROR(GroupedBatchSampler::CreateBudget(
          impl->sampler, groups->patch_grid, options.tokens_per_batch, options.sampler, &impl->bucketed));
      impl->patch_grid = groups->patch_grid;
    } else {
      // Samples in no bucket (bucket_choice) are left out of every epoch: counted, and said.
      if (options.bucket_choice.any()) {
        const uint8_t* k = groups->bucket_of.begin();
        for (size_t i = 0; i < groups->bucket_of.size(); ++i) impl->bucket_left_out += k[i] == kNoLoaderBucket;
      }
      if (impl->bucket_left_out > 0) {
        const BucketChoice& c = options.bucket_choice;
        const std::string why =
            std::string(c.no_upscale ? "smaller than every bucket, and bucket_no_upscale does not enlarge them" : "") +
            (c.no_upscale && c.min_side > 0 ? ", or " : "") +
            (c.min_side > 0 ? "a shorter side under bucket_min_side " + std::to_string(c.min_side) : "");
        if (impl->bucket_left_out == groups->bucket_of.size()) {
          return Status::InvalidArgument(name + ": every one of its " + std::to_string(impl->bucket_left_out) +
                                         " samples is in no bucket (" + why +
                                         "): give smaller buckets, or leave bucket_no_upscale and bucket_min_side out");
        }
        impl->warnings.push_back(name + ": " + std::to_string(impl->bucket_left_out) + " of " +
                                 std::to_string(groups->bucket_of.size()) + " samples are in no bucket (" + why +
                                 ") and are left out of every epoch");
      }
      SHARDPACK_RETURN_IF_ERROR(GroupedBatchSampler::Create(impl->sampler, groups->bucket_of, options.buckets.size(),
                                                            options.sampler, options.bucket_tail, mixture != nullptr,
                                                            &impl->bucketed));
    }
  }
  {
    std::vector<std::string> open_warnings = OpenWarnings(name, *impl->reader, options);
    impl->warnings.insert(impl->warnings.begin(), open_warnings.begin(), open_warnings.end());
  }
  if (groups != nullptr) {
    impl->groups_origin = groups->origin;
    if (!groups->note.empty()) impl->warnings.push_back(groups->note);
  }
  if (impl->bucketed == nullptr && impl->sampler.worker_batches() == 0) {
    // drop_last with a batch larger than what this rank (and worker) reads: a silent empty epoch.
    const SamplerOptions& so = options.sampler;
    impl->warnings.push_back(name + ": " + std::to_string(impl->reader->size()) + " samples" +
                             (so.world_size > 1 ? " shared by " + std::to_string(so.world_size) + " ranks" : "") +
                             (so.num_workers > 1 ? " and " + std::to_string(so.num_workers) + " workers" : "") +
                             " make no whole batch of " + std::to_string(so.batch_size) +
                             " with drop_last: every epoch is empty (0 batches). Use a smaller batch size, or "
                             "keep the last partial batch (no drop_last)");
  }
  impl->arena = std::make_unique<tbb::task_arena>(WorkerThreads(options.threads));
  // A buffer holds a batch of the largest image the options give.
  size_t mask_bytes = 0;
  SHARDPACK_RETURN_IF_ERROR(SizeBatchBuffers(options, &impl->batch_bytes, &mask_bytes));
  impl->slots.resize(size_t(options.prefetch) + 2);
  impl->held.assign(impl->slots.size(), false);
  for (Slot& s : impl->slots) {
    s.capacity = impl->batch_bytes;
    s.data = impl->AllocateBuffer(s.capacity);
    if (s.data == nullptr)
      return Status::IOError("cannot allocate a batch buffer of " + FormatBytes(s.capacity) + " (the loader holds " +
                             std::to_string(impl->slots.size()) + ", prefetch + 2): lower the batch size or prefetch");
    if (mask_bytes == 0) continue;
    s.mask_capacity = mask_bytes;
    s.mask_data = impl->AllocateBuffer(mask_bytes);
    if (s.mask_data == nullptr)
      return Status::IOError("cannot allocate a mask buffer of " + FormatBytes(mask_bytes) + " (the loader holds " +
                             std::to_string(impl->slots.size()) + ", prefetch + 2): lower the batch size or prefetch");
  }
  loader->reset(new Loader(std::move(impl)));
  return Status::OK();
}

uint64_t Loader::batches_per_epoch() const { return batches_in_epoch(impl_->epoch); }

uint64_t Loader::batches_in_epoch(uint64_t epoch) const { return impl_->WorkerBatches(epoch); }

uint64_t Loader::SamplesConsumed(uint64_t rank_batches_done) const {
  if (impl_->bucketed != nullptr) return impl_->bucketed->BatchesConsumed(impl_->epoch, rank_batches_done);
  return impl_->sampler.SamplesConsumed(rank_batches_done);
}

Status Loader::StartEpoch(uint64_t epoch, uint64_t first_batch, uint64_t samples_done) {
  Impl& m = *impl_;
  m.StopProducer();
  // The producer has stopped, so the sampler is this thread's until the next one starts.
  if (m.bucketed != nullptr) {
    SHARDPACK_RETURN_IF_ERROR(m.bucketed->SetEpochStart(epoch, samples_done));
  } else {
    SHARDPACK_RETURN_IF_ERROR(m.sampler.SetEpochStart(samples_done));
  }
  m.epoch = epoch;
  std::lock_guard<std::mutex> lock(m.mu);  // Release() may run on another thread meanwhile
  m.stop = false;
  m.finished = false;
  m.failed = false;
  m.error = Status::OK();
  // Slots the consumer still holds (Acquire) stay out of use until released; Next()'s slot and the
  // batches of the old epoch are free again.
  if (m.next_held >= 0) m.held[size_t(m.next_held)] = false;
  m.next_held = -1;
  m.producer_waiting = false;
  m.free.clear();
  m.filling.clear();  // (batches the old producer left half filled; its workers are done)
  m.ready.clear();
  for (size_t i = 0; i < m.slots.size(); ++i) {
    if (!m.held[i]) m.free.push_back(i);
  }
  m.images = m.bytes_read = m.corrupt = m.read_ns = m.decode_ns = 0;
  m.batches = 0;
  m.produce_seconds = m.wait_seconds = 0;
  m.epoch_start = Clock::now();
  m.producer = std::thread([&m, epoch, first_batch] { m.Produce(epoch, first_batch); });
  return Status::OK();
}

Status Loader::Next(const Batch** batch) {
  if (impl_->next_held >= 0) {  // the consumer is done with the batch it held
    Release(static_cast<uint32_t>(impl_->next_held));
    impl_->next_held = -1;
  }
  uint32_t slot = 0;
  SHARDPACK_RETURN_IF_ERROR(Acquire(batch, &slot));
  if (*batch != nullptr) impl_->next_held = long(slot);
  return Status::OK();
}

Status Loader::Acquire(const Batch** batch, uint32_t* slot) {
  Impl& m = *impl_;
  *batch = nullptr;
  std::unique_lock<std::mutex> lock(m.mu);
  const auto t0 = Clock::now();
  // Every slot held by the consumer: the producer waits for one, nothing is ready, and nothing can
  // become ready.
  const auto starved = [&] { return m.ready.empty() && m.free.empty() && m.producer_waiting && !m.finished; };
  m.cv.wait(lock, [&] { return !m.ready.empty() || m.finished || starved(); });
  m.wait_seconds += Since(t0);
  if (m.ready.empty() && !m.finished) {
    return Status::InvalidArgument("all " + std::to_string(m.slots.size()) +
                                   " batch buffers are still held by the consumer, so no batch can be made; "
                                   "let go of old batches (copy what you keep) or raise prefetch");
  }
  if (m.ready.empty()) return m.error;
  *slot = static_cast<uint32_t>(m.ready.front());
  m.ready.pop_front();
  m.held[*slot] = true;
  ++m.batches;
  *batch = &m.slots[*slot].batch;
  return Status::OK();
}

void Loader::Release(uint32_t slot) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (slot >= m.slots.size() || !m.held[slot]) return;
    m.held[slot] = false;
    m.free.push_back(slot);
  }
  m.cv.notify_all();
}

std::vector<const uint8_t*> Loader::buffers() const {
  std::vector<const uint8_t*> out;
  for (const Slot& s : impl_->slots) out.push_back(s.data);
  return out;
}

size_t Loader::batch_bytes() const { return impl_->batch_bytes; }

LoaderStats Loader::stats() const {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  LoaderStats s;
  s.batches = m.batches;
  s.images = m.images;
  s.bytes_read = m.bytes_read;
  s.corrupt = m.corrupt;
  s.read_seconds = m.read_ns / 1e9;
  s.decode_seconds = m.decode_ns / 1e9;
  s.produce_seconds = m.produce_seconds;
  s.consumer_wait_seconds = m.wait_seconds;
  s.elapsed_seconds = Since(m.epoch_start);
  return s;
}

}  // namespace shardpack
