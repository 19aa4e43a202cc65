#include "shardpack/loader_bench.h"

#include <chrono>
#include <ctime>
#include <set>
#include <thread>

#include "ground/worker_threads.h"
#include "ops/diagnose/bench_result_rates.h"
#include "ops/diagnose/shuffle_quality.h"

namespace shardpack {
namespace {

// The CPU time of the whole process, all its threads, in seconds.
double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + t.tv_nsec / 1e9;
}

}  // namespace

Status RunLoaderBench(const std::string& dataset, const BenchOptions& o, BenchResult* r) {
  *r = BenchResult();
  using Clock = std::chrono::steady_clock;
  const auto open_start = Clock::now();
  std::unique_ptr<Loader> loader;
  const bool mixed = !o.mixture.sources.empty();
  SHARDPACK_RETURN_IF_ERROR(mixed ? Loader::Open(o.mixture, o.loader, &loader)
                                  : Loader::Open(dataset, o.loader, &loader));
  r->warnings = loader->warnings();
  r->predecoded = loader->reads_decoded_images();
  const auto start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  r->open_seconds = std::chrono::duration<double>(start - open_start).count();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::set<std::string> seen;  // skip lines already kept
  for (const Bucket& b : o.loader.buckets) r->buckets.push_back({b, 0, 0, 0, 0, 0});
  for (uint64_t epoch = 0;; ++epoch) {
    if (o.seconds <= 0 && epoch >= o.epochs) break;
    if (o.seconds > 0 && elapsed() >= o.seconds) break;
    SHARDPACK_RETURN_IF_ERROR(loader->StartEpoch(epoch));
    for (;;) {
      const Batch* batch = nullptr;
      SHARDPACK_RETURN_IF_ERROR(loader->Next(&batch));
      KeepSkipLines(loader->TakeSkipReports(), &seen, r);
      if (batch == nullptr) break;
      ++r->batches;
      r->images += batch->count;  // consumed; batches still prefetched at the end do not count
      r->pixels += uint64_t(batch->count) * batch->height * batch->width;
      if (batch->bucket >= 0) {
        BucketRate& b = r->buckets[size_t(batch->bucket)];
        ++b.batches;
        b.images += batch->count;
        b.fill_seconds += batch->fill_seconds;
      }
      if (o.consumer_rate > 0) {  // the simulated GPU works on this batch
        std::this_thread::sleep_for(std::chrono::duration<double>(batch->count / o.consumer_rate));
      }
      if (o.seconds > 0 && elapsed() >= o.seconds) break;
    }
    const LoaderStats s = loader->stats();
    r->bytes_read += s.bytes_read;
    r->corrupt += s.corrupt;
    r->read_seconds += s.read_seconds;
    r->decode_seconds += s.decode_seconds;
    r->consumer_wait_seconds += s.consumer_wait_seconds;
  }
  r->seconds = elapsed();
  r->cpu_seconds = ProcessCpuSeconds() - cpu_start;
  FinishBenchResult(o, r);
  // After the timed epochs: the statistic computes whole epochs' orders.
  return MeasureShuffleQuality(mixed ? &o.mixture : nullptr, loader->source_shard_sizes(), o.loader.sampler,
                               {1000, 10000}, 0, &r->shuffle_quality);
}

void KeepSkipLines(std::vector<std::string> lines, std::set<std::string>* seen, BenchResult* r) {
  for (std::string& line : lines) {
    if (r->skipped.size() < BenchResult::kMaxSkipLines && seen->insert(line).second) {
      r->skipped.push_back(std::move(line));
    }
  }
}

void FinishBenchResult(const BenchOptions& o, BenchResult* r) {
  if (r->seconds > 0) {
    r->images_per_second = r->images / r->seconds;
    r->pixels_per_second = double(r->pixels) / r->seconds;
    r->bytes_per_second = r->bytes_read / r->seconds;
    r->consumer_wait_share = r->consumer_wait_seconds / r->seconds;
    r->copy_busy_share = r->copy_seconds / r->seconds;
    r->cores_busy = (r->read_seconds + r->decode_seconds) / (r->seconds * WorkerThreads(o.loader.threads));
  }
  r->keeps_up = o.consumer_rate <= 0 || r->consumer_wait_share < 0.05;
  r->consumer_simulated = o.consumer_rate > 0;
  for (BucketRate& b : r->buckets) {
    if (b.fill_seconds <= 0) continue;
    b.images_per_second = b.images / b.fill_seconds;
    b.pixels_per_second = double(b.images) * b.bucket.width * b.bucket.height / b.fill_seconds;
  }
}

}  // namespace shardpack
