// CudaFeed: see include/shardpack/cuda_feed.h. Host side only; the kernel is ops/cuda/normalize.cu.
//
// Invariants: device slot d holds batch N when N % depth == d. Before slot d is written again, the
// copy stream waits on the event the consumer recorded in Done() for its previous batch. A host
// batch buffer goes back to the loader from a host function queued on the copy stream after its
// copy, so it is never rewritten while the copy engine reads it.
#include "shardpack/cuda_feed.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>

#include "ops/cuda/normalize.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::IOError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

#define SHARDPACK_CUDA(expr) SHARDPACK_RETURN_IF_ERROR(CudaStatus((expr), #expr))

size_t ElementBytes(DeviceDType t) {
  switch (t) {
    case DeviceDType::kUint8:
      return 1;
    case DeviceDType::kFloat32:
      return 4;
    default:
      return 2;
  }
}

// Runs on a CUDA driver thread once a copy is done: gives the host buffer back. No CUDA calls here.
struct HostRelease {
  Loader* loader;
  uint32_t slot;
  static void CUDART_CB Run(void* p) {
    auto* r = static_cast<HostRelease*>(p);
    r->loader->Release(r->slot);
    delete r;
  }
};

}  // namespace

struct CudaFeed::Impl {
  struct DeviceSlot {
    void* input = nullptr;   // the uint8 batch as copied
    void* output = nullptr;  // normalised (nullptr for kUint8: input is the output)
    cudaEvent_t copy_start = nullptr, ready = nullptr, free = nullptr;
    bool in_use = false;  // holds a batch handed out
    bool done = true;     // Done() was called for it
    DeviceBatch batch;
  };

  CudaFeedOptions options;
  std::unique_ptr<Loader> loader;
  cudaStream_t copy_stream = nullptr;
  std::vector<DeviceSlot> slots;
  uint64_t next = 0;
  size_t input_bytes = 0, output_bytes = 0;
  CudaFeedStats stats;
  Clock::time_point start = Clock::now();

  ~Impl() {
    if (copy_stream) cudaStreamSynchronize(copy_stream);
    loader.reset();  // frees the pinned host buffers (cudaFreeHost)
    for (DeviceSlot& s : slots) {
      cudaFree(s.input);
      cudaFree(s.output);
      for (cudaEvent_t e : {s.copy_start, s.ready, s.free}) {
        if (e) cudaEventDestroy(e);
      }
    }
    if (copy_stream) cudaStreamDestroy(copy_stream);
  }

  // Copies the host batch into slot s (and normalises it there), and queues the host buffer's
  // release behind the copy. Until that release is queued, the host buffer is the caller's.
  Status QueueCopy(DeviceSlot& s, const Batch& host, uint32_t host_slot);

  // Adds the GPU time of the copy that last used slot d to the statistics.
  void AccountCopy(DeviceSlot& s) {
    if (!s.in_use) return;
    float ms = 0;
    if (cudaEventSynchronize(s.ready) == cudaSuccess &&
        cudaEventElapsedTime(&ms, s.copy_start, s.ready) == cudaSuccess) {
      stats.copy_seconds += ms / 1000.0;
    }
  }
};

bool CudaDeviceAvailable(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = cudaGetErrorString(e);
    return false;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n > 0;
}

CudaFeed::CudaFeed(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaFeed::~CudaFeed() = default;

Status CudaFeed::Open(const std::string& dataset, const CudaFeedOptions& options, std::unique_ptr<CudaFeed>* feed) {
  std::string why;
  if (!CudaDeviceAvailable(&why)) return Status::Unsupported("no usable CUDA device: " + why);
  if (options.depth < 2) return Status::InvalidArgument("CUDA feed depth must be at least 2 (double buffering)");
  if (!options.loader.buckets.empty()) {
    return Status::Unsupported(
        "the CUDA feed makes batches of one size, and buckets make batches of several: read buckets with the "
        "CPU loader (pinned memory) and copy each batch to the device");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  LoaderOptions& lo = impl->options.loader;
  if (options.dtype != DeviceDType::kUint8) lo.nchw = false;  // the kernel reads NHWC
  SHARDPACK_CUDA(cudaSetDevice(options.device));
  // Page-locked host buffers: the copy engine reads them directly, without a staging copy.
  lo.allocator.allocate = [](size_t bytes) -> uint8_t* {
    void* p = nullptr;
    return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? static_cast<uint8_t*>(p) : nullptr;
  };
  lo.allocator.free = [](uint8_t* p, size_t) { cudaFreeHost(p); };
  SHARDPACK_RETURN_IF_ERROR(Loader::Open(dataset, lo, &impl->loader));
  SHARDPACK_CUDA(cudaStreamCreateWithFlags(&impl->copy_stream, cudaStreamNonBlocking));
  impl->input_bytes = impl->loader->batch_bytes();
  impl->output_bytes = options.dtype == DeviceDType::kUint8 ? 0 : impl->input_bytes * ElementBytes(options.dtype);
  impl->slots.resize(size_t(options.depth));
  for (Impl::DeviceSlot& s : impl->slots) {
    SHARDPACK_CUDA(cudaMalloc(&s.input, impl->input_bytes));
    if (impl->output_bytes) SHARDPACK_CUDA(cudaMalloc(&s.output, impl->output_bytes));
    SHARDPACK_CUDA(cudaEventCreate(&s.copy_start));
    SHARDPACK_CUDA(cudaEventCreate(&s.ready));
    SHARDPACK_CUDA(cudaEventCreateWithFlags(&s.free, cudaEventDisableTiming));
  }
  feed->reset(new CudaFeed(std::move(impl)));
  return Status::OK();
}

uint64_t CudaFeed::batches_per_epoch() const { return impl_->loader->batches_per_epoch(); }

Status CudaFeed::StartEpoch(uint64_t epoch, uint64_t first_batch) {
  Impl& m = *impl_;
  // An epoch boundary: let every queued copy and the consumer's work finish, then start afresh.
  SHARDPACK_CUDA(cudaDeviceSynchronize());
  for (Impl::DeviceSlot& s : m.slots) {
    m.AccountCopy(s);
    s.in_use = false;
    s.done = true;
  }
  m.next = 0;
  m.stats = CudaFeedStats();
  m.start = Clock::now();
  return m.loader->StartEpoch(epoch, first_batch);
}

Status CudaFeed::Next(const DeviceBatch** batch) {
  Impl& m = *impl_;
  *batch = nullptr;
  Impl::DeviceSlot& s = m.slots[m.next % m.slots.size()];
  if (!s.done) {
    return Status::InvalidArgument("CudaFeed: Done() was not called for the batch " + std::to_string(m.slots.size()) +
                                   " batches ago, whose device buffer comes next");
  }
  m.AccountCopy(s);
  const auto t0 = Clock::now();
  const Batch* host = nullptr;
  uint32_t host_slot = 0;
  SHARDPACK_RETURN_IF_ERROR(m.loader->Acquire(&host, &host_slot));
  m.stats.host_wait_seconds += Since(t0);
  if (host == nullptr) return Status::OK();
  const Status queued = m.QueueCopy(s, *host, host_slot);
  if (!queued.ok()) {
    // A CUDA call failed before the release was queued: give the host buffer back here, or the
    // loader waits for it forever; once the stream is idle, so that no copy still reads it.
    cudaStreamSynchronize(m.copy_stream);
    m.loader->Release(host_slot);
    return queued;
  }
  DeviceBatch& b = s.batch;
  b.slot = uint32_t(m.next % m.slots.size());
  ++m.next;
  ++m.stats.batches;
  m.stats.images += b.count;
  *batch = &b;
  return Status::OK();
}

Status CudaFeed::Impl::QueueCopy(DeviceSlot& s, const Batch& host, uint32_t host_slot) {
  // Everything read from the host batch is read now: the host function queued below gives it back
  // to the loader the moment the copy ends, maybe before this function returns.
  DeviceBatch& b = s.batch;
  b.count = host.count;
  b.bytes = host.image_bytes * ElementBytes(options.dtype);
  b.labels = host.labels;
  b.keys = host.keys;
  b.indices = host.indices;
  // The consumer's work on the slot's previous batch must be finished before it is overwritten.
  if (s.in_use) SHARDPACK_CUDA(cudaStreamWaitEvent(copy_stream, s.free, 0));
  SHARDPACK_CUDA(cudaEventRecord(s.copy_start, copy_stream));
  SHARDPACK_CUDA(cudaMemcpyAsync(s.input, host.images, host.image_bytes, cudaMemcpyHostToDevice, copy_stream));
  const CudaFeedOptions& o = options;
  if (o.dtype != DeviceDType::kUint8) {
    SHARDPACK_CUDA(LaunchNormalize(static_cast<const uint8_t*>(s.input), s.output, o.dtype, host.count, o.loader.height,
                                   o.loader.width, o.mean, o.std, copy_stream));
  }
  SHARDPACK_CUDA(cudaEventRecord(s.ready, copy_stream));
  SHARDPACK_CUDA(cudaLaunchHostFunc(copy_stream, HostRelease::Run, new HostRelease{loader.get(), host_slot}));
  s.in_use = true;
  s.done = false;
  b.data = o.dtype == DeviceDType::kUint8 ? s.input : s.output;
  b.dtype = o.dtype;
  b.stream = copy_stream;
  b.ready = s.ready;
  return Status::OK();
}

Status CudaFeed::Done(const DeviceBatch& batch, void* consumer_stream) {
  Impl& m = *impl_;
  if (batch.slot >= m.slots.size()) return Status::InvalidArgument("CudaFeed::Done: not a batch of this feed");
  Impl::DeviceSlot& s = m.slots[batch.slot];
  SHARDPACK_CUDA(cudaEventRecord(s.free, static_cast<cudaStream_t>(consumer_stream)));
  s.done = true;
  return Status::OK();
}

CudaFeedStats CudaFeed::stats() const {
  CudaFeedStats s = impl_->stats;
  s.elapsed_seconds = Since(impl_->start);
  s.corrupt = impl_->loader->stats().corrupt;
  return s;
}

std::vector<std::string> CudaFeed::TakeSkipReports() { return impl_->loader->TakeSkipReports(); }

}  // namespace shardpack
