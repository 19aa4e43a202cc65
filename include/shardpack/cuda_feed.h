// CudaFeed: the last hop of the training path, batches into GPU memory without the GPU waiting.
//
// The loader fills batch buffers in page-locked host memory (cudaHostAlloc, through its allocator);
// each batch is copied to the device asynchronously on a dedicated copy stream and, unless uint8 is
// asked for, turned into normalised NCHW float32, float16 or bfloat16 ((x - mean) / std per channel)
// by one kernel on the same stream. `depth` device buffers rotate (2: double, 3: triple buffering),
// so the copy of batch N+1 runs while the consumer computes on batch N. The consumer makes its own
// stream wait on the batch's `ready` event, and calls Done() once its work on the batch is queued;
// the buffer is reused only after that work has finished on the GPU.
//
// Built when CMake finds the CUDA toolkit (SHARDPACK_CUDA); without a CUDA device Open() returns
// Unsupported, so everything else builds and runs on machines without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardpack/loader.h"
#include "shardpack/status.h"

namespace shardpack {

enum class DeviceDType { kUint8, kFloat32, kFloat16, kBFloat16 };

struct CudaFeedOptions {
  LoaderOptions loader;  // its allocator is replaced by page-locked memory
  int device = 0;
  int depth = 3;  // device buffers in rotation
  // kUint8: the loader's bytes as they are (NHWC, or NCHW with loader.nchw). Otherwise normalised
  // NCHW whatever loader.nchw says (the loader then produces NHWC, which the kernel transposes).
  DeviceDType dtype = DeviceDType::kFloat32;
  float mean[3] = {0.485f * 255, 0.456f * 255, 0.406f * 255};  // per channel, on the 0-255 scale
  float std[3] = {0.229f * 255, 0.224f * 255, 0.225f * 255};
};

struct DeviceBatch {
  const void* data = nullptr;  // device memory: count x 3 x H x W (normalised) or the loader's layout (uint8)
  size_t bytes = 0;
  uint32_t count = 0;
  DeviceDType dtype = DeviceDType::kFloat32;
  // Copied out of the loader's host batch in Next(): that buffer goes back to the loader as soon
  // as the copy ends (a host function on the copy stream) and is then refilled with a later batch.
  std::vector<int32_t> labels;
  std::vector<std::string> keys;
  std::vector<uint64_t> indices;
  void* stream = nullptr;  // the cudaStream_t the batch was produced on
  void* ready = nullptr;   // cudaEvent_t to wait on (cudaStreamWaitEvent) before reading `data`
  uint32_t slot = 0;       // device buffer, for Done()
};

struct CudaFeedStats {
  uint64_t batches = 0, images = 0;
  double elapsed_seconds = 0;
  double copy_seconds = 0;       // GPU time of the copies and the normalisation kernel (events)
  double host_wait_seconds = 0;  // Next() waiting for the loader: the CPU side is the bottleneck
  double slot_wait_seconds = 0;  // Next() waiting for a device buffer the consumer still uses
  uint64_t corrupt = 0;          // samples skipped as unreadable or undecodable (LoaderStats::corrupt)
};

class CudaFeed {
 public:
  static Status Open(const std::string& dataset, const CudaFeedOptions& options, std::unique_ptr<CudaFeed>* feed);
  ~CudaFeed();
  CudaFeed(const CudaFeed&) = delete;
  CudaFeed& operator=(const CudaFeed&) = delete;

  uint64_t batches_per_epoch() const;
  Status StartEpoch(uint64_t epoch, uint64_t first_batch = 0);
  // The next batch in device memory (its copy may still be running: wait on `ready`); nullptr at
  // the end of the epoch. Valid until Done() or StartEpoch().
  Status Next(const DeviceBatch** batch);
  // The consumer's work on the batch is queued on `consumer_stream` (nullptr: the legacy default
  // stream); the device buffer is reused once that work completes.
  Status Done(const DeviceBatch& batch, void* consumer_stream);
  CudaFeedStats stats() const;
  // The samples skipped (LoaderOptions::skip_corrupt) since the last call, one line each, as
  // Loader::TakeSkipReports words them: a caller shows them, so that nothing is dropped silently.
  std::vector<std::string> TakeSkipReports();

 private:
  struct Impl;
  explicit CudaFeed(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether a CUDA device can be used; *why says why not.
bool CudaDeviceAvailable(std::string* why);

}  // namespace shardpack
