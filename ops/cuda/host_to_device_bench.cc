#include "ops/cuda/host_to_device_bench.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "shardpack/cuda_feed.h"

namespace shardpack {
namespace {

Status Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::IOError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// Copies of `bytes` from `host` to `device` on `stream` until `seconds` passed (at least 3), each
// waited for, as a loader hands batches over one at a time: bytes/s.
double CopyRate(const void* host, void* device, uint64_t bytes, double seconds, cudaStream_t stream, Status* s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t copies = 0;
  double elapsed = 0;
  while (s->ok() && (copies < 3 || elapsed < seconds)) {
    *s = Check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    if (s->ok()) *s = Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    ++copies;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return elapsed > 0 ? double(copies) * double(bytes) / elapsed : 0;
}

}  // namespace

Status MeasureHostToDevice(uint64_t batch_bytes, double seconds, HostToDeviceFigures* f) {
  *f = HostToDeviceFigures();
  std::string why;
  if (!CudaDeviceAvailable(&why)) return Status::Unsupported("no usable CUDA device: " + why);
  int device = 0;
  SHARDPACK_RETURN_IF_ERROR(Check(cudaGetDevice(&device), "cudaGetDevice"));
  cudaDeviceProp prop;
  SHARDPACK_RETURN_IF_ERROR(Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"));
  f->device = prop.name;
  std::vector<uint8_t> pageable(batch_bytes, 7);
  void* pinned = nullptr;
  void* target = nullptr;
  cudaStream_t stream = nullptr;
  Status s = Check(cudaMallocHost(&pinned, batch_bytes), "cudaMallocHost");
  if (s.ok()) s = Check(cudaMalloc(&target, batch_bytes), "cudaMalloc");
  if (s.ok()) s = Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  if (s.ok()) {
    std::memset(pinned, 7, batch_bytes);
    f->pageable_gb_per_s = CopyRate(pageable.data(), target, batch_bytes, seconds / 2, stream, &s) / 1e9;
  }
  if (s.ok()) {
    const double rate = CopyRate(pinned, target, batch_bytes, seconds / 2, stream, &s);
    f->pinned_gb_per_s = rate / 1e9;
    f->pinned_batches_per_s = rate / double(batch_bytes);
  }
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (target != nullptr) cudaFree(target);
  if (pinned != nullptr) cudaFreeHost(pinned);
  return s;
}

}  // namespace shardpack
