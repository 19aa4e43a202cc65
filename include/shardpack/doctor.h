// `shardpack doctor`: measures, on the user's own data and machine, each layer of a training input
// pipeline (storage, decode, transform, the whole loader) for a bounded time on a sample of the
// data, and says which layer starves the GPU and what would fix it (docs/doctor.md).
//
// Bounded and safe on a production node: reads at most `sample_files` files (or `sample_bytes` of a
// packed dataset's shards), writes only into a temporary folder that it removes, and changes
// nothing else. Every figure in the report comes from this run; a figure computed from measured
// ones is marked as an estimate where it is printed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardpack/buckets.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

// What copying batches into GPU memory costs (the host-to-device stage).
struct HostToDeviceFigures {
  double pageable_gb_per_s = 0;     // cudaMemcpy from ordinary (pageable) memory
  double pinned_gb_per_s = 0;       // cudaMemcpyAsync from page-locked memory
  double pinned_batches_per_s = 0;  // batches of batch x crop x crop x 3 bytes the copy engine sustains
  std::string device;               // the GPU's name
};

// Measures HostToDeviceFigures for batches of `batch_bytes` within `seconds`; Unsupported without
// a CUDA device. The command line passes one where shardpack was built with CUDA
// (ops/cuda/host_to_device_bench.h); the library itself needs no GPU.
using HostToDeviceBench = std::function<Status(uint64_t batch_bytes, double seconds, HostToDeviceFigures*)>;

struct DoctorOptions {
  double model_rate = 0;  // images/s the training step consumes; 0: unknown (the verdict says how to measure it)
  uint32_t batch = 256;   // images per batch, for the loader stage
  uint32_t crop = 224;    // output size of the training transform (random-resized-crop + flip)
  // Aspect-ratio buckets instead of `crop` (docs/buckets.md): the decode, transform, host-to-device
  // and loader stages cut each image to its bucket, as Loader(buckets=...) does.
  std::vector<Bucket> buckets;
  double seconds = 60;           // the whole measurement, shared among the stages
  int threads = 0;               // threads for the parallel measurements and the loader; 0 = all cores
  uint64_t sample_files = 2000;  // an image folder: at most this many files are read (a random sample)
  // At most this many bytes of files are read (and held in memory for the decode stages), or of a
  // packed dataset's shards.
  uint64_t sample_bytes = 256ull << 20;
  // Evict the sample's files from the page cache before each read pass (posix_fadvise, no root
  // needed), so that the storage figures are what a real epoch sees on a cold cache.
  bool cold = false;
  uint64_t seed = 1;  // of the random sample
  // Storage is read through this Env (nullptr: Env::Default()); tests throttle it.
  Env* env = nullptr;
  // Called with a line as each stage starts ("decode: 1,000 images, 1 thread ...").
  std::function<void(const std::string&)> progress;
  // Where the temporary folder goes (empty: /tmp; the CLI gives $TMPDIR when it is set).
  std::string temp_parent;
  // The host-to-device stage; empty: not measured (a build without CUDA).
  HostToDeviceBench host_to_device;
};

// One layer's throughput in images/s, as the table prints it, fastest first.
struct DoctorLayer {
  std::string name;         // "storage", "decode", "transform", "host to device", "loader"
  double images_per_s = 0;  // at `threads` threads; 0 when not measured
  std::string detail;       // what was measured, with its units
  bool measured = false;
};

struct DoctorReport {
  std::string path;
  bool packed_input = false;  // PATH was a packed dataset, not an image folder
  int threads = 0;            // as used
  uint64_t cores = 0;         // std::thread::hardware_concurrency()

  // 1. Storage. For an image folder: listing, then small-file reads of the sample with 1 and with
  // `threads` threads, a second pass of the 1-thread files (page cache), and sequential reads of a
  // shard packed from the sample. For a packed dataset: sequential reads of its shards.
  uint64_t files_listed = 0;
  double list_seconds = 0;
  double files_listed_per_s = 0;
  uint64_t sample_files = 0, sample_bytes = 0;
  double read1_files_per_s = 0, read1_mb_per_s = 0;  // 1 thread, first pass
  double readn_files_per_s = 0, readn_mb_per_s = 0;  // `threads` threads, other files
  double reread_files_per_s = 0;                     // the 1-thread files again
  double cached_share = 0;         // of the sample's pages in the page cache before the first pass (mincore)
  bool page_cache_held = false;    // cached_share >= 0.9: the first passes read memory, not the storage
  bool cold = false;               // the passes were made on an evicted cache
  double packed_mb_per_s = 0;      // sequential reads of packed shards
  double packed_cached_share = 0;  // of those shards' pages in the page cache before reading them
  double packed_images_per_s = 0;

  // 2. Decode, on the sample in memory: per core (one thread alone), and the crop on every thread at
  // once (images/s in all; 0 with one thread, where it is the per-core figure).
  uint64_t decoded = 0;
  double full_decode_per_core = 0;  // whole image to RGB
  double crop_decode_per_core = 0;  // shardpack's crop-aware decode of the training crop
  double crop_decode_together = 0;  // the same on `threads` threads at once: the decode row's figure
  uint32_t median_width = 0, median_height = 0;
  double median_megapixels = 0, p90_megapixels = 0;
  // Of images whose shorter side exceeds 2x the crop, or with buckets 2x their bucket's shorter side
  // (each image's own target: 448 says nothing of a 1024x1024 bucket).
  double share_above_2x_crop = 0;
  double mean_image_bytes = 0;

  // 3. Transform: the random-resized-crop and flip of a decoded image into a batch buffer, per core.
  double transform_per_core = 0;

  // 4. Host to device, where a CUDA device is present; else host_to_device_note says why not.
  bool host_to_device_measured = false;
  HostToDeviceFigures host_to_device;
  double host_to_device_images_per_s = 0;  // pinned batches/s x batch
  std::string host_to_device_note;

  // 5. The whole loader at `threads` threads over the packed sample (or the dataset).
  double loader_images_per_s = 0;
  double loader_read_seconds = 0, loader_decode_seconds = 0;
  std::string loader_slowest_stage;  // "read" or "decode+transform"

  // The verdict.
  std::vector<DoctorLayer> layers;   // fastest first
  double feed_today = 0;             // images/s the pipeline feeds as the data is stored today
  std::string bottleneck;            // "storage", "decode", "transform", "loader" or "gpu"
  std::string verdict;               // one sentence
  std::vector<std::string> actions;  // recommended, each with its measured or estimated effect
};

// Measures the pipeline for `path`: an image folder (the layout pack reads) or a packed dataset
// (a folder with manifest.json, or a shard list). InvalidArgument for bad options, NotFound for a
// path without images.
Status RunDoctor(const std::string& path, const DoctorOptions& options, DoctorReport* report);

}  // namespace shardpack
