#include "ops/cuda/cuda_bench.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <set>
#include <thread>

#include "ops/diagnose/bench_result_rates.h"

namespace shardpack {

Status RunCudaBench(const std::string& dataset, const BenchOptions& o, DeviceDType dtype, BenchResult* r) {
  *r = BenchResult();
  r->device = "cuda";
  CudaFeedOptions fo;
  fo.loader = o.loader;
  fo.dtype = dtype;
  using Clock = std::chrono::steady_clock;
  const auto open_start = Clock::now();
  std::unique_ptr<CudaFeed> feed;
  SHARDPACK_RETURN_IF_ERROR(CudaFeed::Open(dataset, fo, &feed));
  r->open_seconds = std::chrono::duration<double>(Clock::now() - open_start).count();
  // The consumer: its own stream, waiting on each batch's event, as a training step would.
  cudaStream_t consumer = nullptr;
  if (cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking) != cudaSuccess) {
    return Status::IOError("CUDA: cannot create a stream");
  }
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::set<std::string> seen;  // skip lines already kept
  Status status;
  for (uint64_t epoch = 0; status.ok(); ++epoch) {
    if (o.seconds <= 0 && epoch >= o.epochs) break;
    if (o.seconds > 0 && elapsed() >= o.seconds) break;
    status = feed->StartEpoch(epoch);
    while (status.ok()) {
      const DeviceBatch* b = nullptr;
      status = feed->Next(&b);
      KeepSkipLines(feed->TakeSkipReports(), &seen, r);
      if (!status.ok() || b == nullptr) break;
      cudaStreamWaitEvent(consumer, static_cast<cudaEvent_t>(b->ready), 0);
      if (o.consumer_rate > 0) std::this_thread::sleep_for(std::chrono::duration<double>(b->count / o.consumer_rate));
      status = feed->Done(*b, consumer);
      r->images += b->count;
      ++r->batches;
      if (o.seconds > 0 && elapsed() >= o.seconds) break;
    }
    cudaStreamSynchronize(consumer);  // every batch of the epoch is in GPU memory
    const CudaFeedStats s = feed->stats();
    r->copy_seconds += s.copy_seconds;
    r->consumer_wait_seconds += s.host_wait_seconds;
    r->corrupt += s.corrupt;
  }
  cudaStreamDestroy(consumer);
  SHARDPACK_RETURN_IF_ERROR(status);
  r->seconds = elapsed();
  FinishBenchResult(o, r);
  return Status::OK();
}

}  // namespace shardpack
