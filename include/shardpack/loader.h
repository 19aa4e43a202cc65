// Loader: batches of decoded, transformed images for training, from any packed dataset.
//
// One producer thread walks the epoch's batches in order (EpochSampler) and fills them with oneTBB
// workers, image by image (read, decode, transform straight into the batch buffer), two batches at
// a time (more when a batch has few images for the threads) so that no thread waits for a batch's
// last images, and queues them; Next() hands batches
// out in order. At most `prefetch` batches wait in the queue, plus the one the consumer holds:
// memory is (prefetch + 2) x batch bytes, allocated once, through a caller-supplied allocator when
// given (pinned memory for the CUDA and PyTorch paths).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardpack/buckets.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/env.h"
#include "shardpack/mixture.h"
#include "shardpack/remote_options.h"
#include "shardpack/sampler.h"
#include "shardpack/status.h"

namespace shardpack {

// Allocates and frees batch buffers. Both are called from the thread that opens or closes the
// loader, never on the hot path. Without an allocator the loader's buffers start on 64-byte
// boundaries (what JAX needs to take them without a copy); allocate without free: freed by delete[].
struct BatchAllocator {
  std::function<uint8_t*(size_t bytes)> allocate;
  std::function<void(uint8_t* data, size_t bytes)> free;
};

struct LoaderOptions {
  SamplerOptions sampler;  // batch size, shuffle, seed, drop_last, rank/world, worker
  uint32_t height = 224;   // output size of every image
  uint32_t width = 224;
  // Training: random-resized-crop (area share in [scale_min, scale_max] of the image, aspect ratio
  // in [ratio_min, ratio_max], as torchvision does) then horizontal flip with probability `flip`.
  // Evaluation (eval = true): resize the shorter side to eval_resize, then centre crop.
  bool eval = false;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
  double flip = 0.5;
  uint32_t eval_resize = 256;
  // Training JPEG decode with libjpeg-turbo's fast IDCT and upsampling: faster per image
  // (docs/performance.md), values within a level or two. Evaluation always decodes accurately.
  bool fast_decode = true;
  bool nchw = false;      // channel-first output instead of NHWC
  int threads = 0;        // decode threads; 0 = all cores
  uint32_t prefetch = 2;  // batches prepared ahead, at most kMaxPrefetch
  // A sample whose stored bytes are damaged (DataLoss) or cannot be decoded (Corrupt): skipped,
  // counted (LoaderStats::corrupt) and reported once (TakeSkipReports), else Next() returns the
  // error. Skipped means left out: its batch holds only the good samples, in order, and is smaller
  // by as many (a batch left with none is not handed out; Batch::index still counts it). Which
  // samples are skipped depends on the data alone, so a resumed epoch gives exactly the batches of
  // an uninterrupted one. Any other failure (a read the system refuses, a download that keeps
  // failing) always stops the epoch with its error.
  bool skip_corrupt = true;
  uint64_t max_pixels = 178'956'970;
  // Fields to deliver with each image, by name ("txt", "json"; docs/formats/source-layout.md), in
  // Batch::fields. A sample without one gets no value for it, or, with require_fields, stops the
  // epoch with an error naming the sample and field.
  std::vector<std::string> fields;
  bool require_fields = false;
  // A label mask to crop with each image (a segmentation mask, e.g. "seg.png"): that field decoded
  // as one 8-bit channel of class ids, of the image's size, and given exactly the image's crop and
  // flip, resampled by nearest neighbour so that every value stays a class id; Batch::masks. A
  // sample without it, or whose mask is not one 8-bit channel of its image's size, counts as
  // corrupt (skipped with skip_corrupt). A dataset whose manifest lists no such field in any sample
  // is refused at open. Empty: no masks.
  std::string mask;
  // Aspect-ratio buckets (shardpack/buckets.h, docs/buckets.md); empty: every image is cropped to
  // height x width. Otherwise every batch holds images of one bucket, of that bucket's size
  // (Batch::width, height; height and width above are not used): each image, as shown, resized to
  // cover its bucket (the nearest in aspect ratio) and cropped to it, at a random offset and flipped
  // with `flip` in training, centred in evaluation. The epoch's batches follow the rules of
  // ops/read/grouped_batch_sampler.h; bucket_tail says what becomes of each bucket's last, smaller batch.
  // Needs every sample's size from the dataset's sample tables (read at open; a byte a sample), so
  // a local dataset or mixture packed by shardpack; at most 255 buckets. drop_last is not used:
  // bucket_tail kDrop is its counterpart.
  std::vector<Bucket> buckets;
  BucketTail bucket_tail = BucketTail::kPartial;
  // Which images the buckets take (kohya-ss's bucket_no_upscale, a minimum shorter side): those in
  // none are left out of every epoch, counted in bucket_left_out() and said in warnings().
  BucketChoice bucket_choice;
  // Native resolution under a token budget (docs/buckets.md); patch > 0 turns it on. Each image, as
  // shown, is resized without a crop to PatchedSize(w, h, max_side, patch) (never enlarged; sides
  // multiples of `patch`), and a batch holds images whose patches, (h / patch) x (w / patch) each,
  // sum to at most tokens_per_batch (GroupedBatchSampler's budget rules). Batch::images then holds
  // the batch's patches: image after image, each image's patches row by row, each patch patch x
  // patch x 3 (HWC), so that (tokens, patch * patch * 3) is what a linear patch embedding takes
  // without a copy; Batch::sizes and token_offsets say where each image is. Needs max_side (a
  // multiple of patch) and a budget of at least one image of max_side; batch_size, height, width,
  // buckets and nchw are not used. Sizes come from the sample tables, as for buckets.
  uint32_t patch = 0;
  uint32_t max_side = 0;
  uint64_t tokens_per_batch = 0;
  BatchAllocator allocator;  // empty: the loader's own 64-byte-aligned buffers
  Env* env = nullptr;
  // A dataset URL: cache folder, cache bound, shards downloaded ahead (docs/remote.md). The loader
  // sets remote.sequential itself (streaming shuffle or no shuffle), and tells the reader its
  // epoch's order of shards, so that downloads run ahead of the decoders.
  RemoteOptions remote;
  // That order is told a window of this many batches at a time (ops/read/read_planner.h); 0: a
  // window spans at least 64 shards of the stream (and 2 x prefetch_shards). For tests.
  uint64_t read_plan_batches = 0;
};

// The most bytes one batch buffer may hold (16 GiB): images x height x width x 3, or a token budget's
// tokens x patch x patch x 3. Larger options are refused at open with the option to lower; the
// loader allocates (prefetch + 2) such buffers.
constexpr uint64_t kMaxBatchBytes = uint64_t(16) << 30;
constexpr uint32_t kMaxPrefetch = 1024;

struct Batch {
  uint64_t epoch = 0;
  uint64_t index = 0;              // among this worker's batches of the epoch
  uint32_t count = 0;              // images in this batch (the last may be smaller)
  uint32_t height = 0, width = 0;  // of every image in this batch: the options', or its bucket's
  int32_t bucket = -1;             // with buckets: its place in LoaderOptions::buckets
  double fill_seconds = 0;         // its images' time on the threads / the threads (its share of the wall time)
  // With a token budget (LoaderOptions::patch): each image's height and width (2 per image), and
  // where its patches start in `images`, in patches (count + 1 entries: the last is the total).
  std::vector<uint32_t> sizes;
  std::vector<uint64_t> token_offsets;
  const uint8_t* images = nullptr;  // count x H x W x 3 (NHWC) or count x 3 x H x W (NCHW), uint8
  size_t image_bytes = 0;           // bytes used in `images`
  std::vector<int32_t> labels;
  std::vector<std::string> keys;
  std::vector<uint64_t> indices;  // dataset indices (a mixture's: source after source, MixturePlan::offsets)
  std::vector<uint32_t> sources;  // the source of each sample: 0 for one dataset, its place in a Mixture
  // fields[f][i]: the bytes of field LoaderOptions::fields[f] of sample i, untouched; no value when
  // the sample has no such field (or was skipped as corrupt).
  std::vector<std::vector<std::optional<std::string>>> fields;
  // With LoaderOptions::mask: count x H x W uint8 class ids, pixel for pixel under `images`.
  const uint8_t* masks = nullptr;
  size_t mask_bytes = 0;
};

// What the loader measured, the "is my GPU starving?" answer.
struct LoaderStats {
  uint64_t batches = 0;
  uint64_t images = 0;
  uint64_t bytes_read = 0;           // encoded (or raw) bytes read from the dataset
  uint64_t corrupt = 0;              // samples skipped as unreadable or undecodable
  double read_seconds = 0;           // summed over threads
  double decode_seconds = 0;         // decode + transform, summed over threads
  double produce_seconds = 0;        // wall time the producer spent filling batches
  double consumer_wait_seconds = 0;  // time Next() waited for a batch
  double elapsed_seconds = 0;        // since the epoch started
};

struct SampleGroups;  // ops/read/grouped_batch_sampler.h

class Loader {
 public:
  static Status Open(const std::string& dataset, const LoaderOptions& options, std::unique_ptr<Loader>* loader);
  // Over a reader the caller opened (`name` names it in messages). A remote reader for the
  // streaming shuffle or no shuffle must have been opened with RemoteOptions::sequential.
  static Status Open(const std::string& name, std::unique_ptr<DatasetReader> reader, const LoaderOptions& options,
                     std::unique_ptr<Loader>* loader);
  // Over several datasets mixed as `mixture` says (shardpack/mixture.h, docs/mixing.md). Every
  // source is read with `options` (one cache folder, its limit shared evenly by the URL sources).
  // Errors name the source. A sample's random crop is drawn from its position in the epoch, so
  // that a sample a small source repeats gets a fresh crop each time.
  static Status Open(const Mixture& mixture, const LoaderOptions& options, std::unique_ptr<Loader>* loader);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Batches per epoch for this rank and worker: of the epoch last started (0 before any). With
  // buckets over a mixture the count may differ by epoch (each epoch draws its samples):
  // batches_in_epoch tells any epoch's.
  uint64_t batches_per_epoch() const;
  uint64_t batches_in_epoch(uint64_t epoch) const;
  // Starts (or restarts) epoch `epoch` at batch `first_batch`: the batches from there are exactly
  // those an uninterrupted epoch produces. Elastic resume (other ranks or batch size than the run
  // that stopped): `samples_done` from that run's SamplesConsumed, and the batches are made from
  // the rest of the epoch (EpochSampler::SetEpochStart). With buckets, `samples_done` counts the
  // epoch's global batches taken instead (GroupedBatchSampler::SetEpochStart), and the batch size must be
  // the earlier run's.
  Status StartEpoch(uint64_t epoch, uint64_t first_batch = 0, uint64_t samples_done = 0);
  // The epoch's samples taken once every rank has taken its first `rank_batches_done` batches of
  // this epoch (counting those before a samples_done start): what an elastic resume passes on.
  // With buckets: the epoch's global batches taken (GroupedBatchSampler::BatchesConsumed).
  uint64_t SamplesConsumed(uint64_t rank_batches_done) const;
  // The next batch, valid until the following call to Next() or StartEpoch(); nullptr at the end
  // of the epoch.
  Status Next(const Batch** batch);
  // For consumers that keep batches longer (the Python binding, whose tensors share the buffer):
  // the next batch, which stays valid, and whose buffer is not reused, until Release(*slot), even
  // across StartEpoch(). nullptr at the end of the epoch. When the consumer holds every buffer, so
  // that no batch could ever be produced, it fails (InvalidArgument) instead of waiting forever.
  Status Acquire(const Batch** batch, uint32_t* slot);
  void Release(uint32_t slot);
  // The batch buffers, allocated once: (prefetch + 2) of batch_bytes() each; with a mask, as many
  // mask buffers of batch_size x H x W bytes besides.
  std::vector<const uint8_t*> buffers() const;
  size_t batch_bytes() const;
  LoaderStats stats() const;
  // The samples per shard of each source, in the loader's numbering (one source for a dataset): what
  // statistics of the order need (shardpack bench's shuffle quality).
  const std::vector<std::vector<uint64_t>>& source_shard_sizes() const;
  // What the loader found, when it opened, to work badly with these options, each a sentence with
  // the numbers and the way out (a global shuffle over a remote dataset larger than cache_limit,
  // which downloads shards again and again). Callers show them: the library never prints.
  const std::vector<std::string>& warnings() const;
  // With buckets or a token budget, where each sample's group came from: "read" (this process read
  // the sample tables and keeps its own table), "made" (read, and kept in the cache folder as the
  // node's table, which this process maps), "mapped" (the node's table, which another process
  // made); empty with neither. docs/buckets.md, "Cost".
  const std::string& sample_groups_origin() const;
  // With buckets: the samples in no bucket under options.bucket_choice, left out of every epoch.
  uint64_t bucket_left_out() const;
  // What the loader reads, by content: 16 hex digits of XXH64 over each shard's checksum (a shard
  // without one: its file name, bytes and samples) in order, source after source for a mixture.
  // The same dataset at another path or URL gives the same value; another dataset, or one whose
  // shards changed, another. Resume states record it, so that a state is not applied to other data.
  std::string DatasetFingerprint() const;
  // The dataset's generation (how many `shardpack append`s it has had; docs/views.md); 0 for a
  // mixture. A resume state records it, so that one taken before an append says so.
  uint64_t DatasetGeneration() const;
  // The dataset stores decoded pixels (the raw format): its batches need no image decode.
  bool reads_decoded_images() const;
  // The samples skipped (skip_corrupt) since the last call, one line each naming the sample, its
  // index and why ("skipped sample 000042 (index 42): ..."), for the caller to show: each skipped
  // sample is reported once per epoch in which it comes up. Thread-safe.
  std::vector<std::string> TakeSkipReports();

 private:
  struct Impl;
  explicit Loader(std::unique_ptr<Impl> impl);
  // Both Opens over a reader: one dataset (mixture null), or a mixture's reader, plan and the
  // shard sizes of each source; with buckets or a token budget, each sample's group.
  static Status OpenOver(const std::string& name, std::unique_ptr<DatasetReader> reader,
                         std::shared_ptr<const MixturePlan> mixture,
                         std::vector<std::vector<uint64_t>> source_shard_sizes,
                         std::shared_ptr<const SampleGroups> groups, const LoaderOptions& options,
                         std::unique_ptr<Loader>* loader);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardpack
