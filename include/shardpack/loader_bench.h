// The measurement behind `shardpack bench`: runs the Loader over a dataset and reports throughput,
// per-stage time, and, against a simulated consumer (a GPU taking `consumer_rate` images/s),
// whether the loader keeps up.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "shardpack/loader.h"

namespace shardpack {

struct BenchOptions {
  LoaderOptions loader;
  Mixture mixture;           // sources given: the loader reads this mixture, and `dataset` is ignored
  uint64_t epochs = 1;       // epochs to run (ignored when seconds > 0)
  double seconds = 0;        // run for this long instead (whole batches; epochs repeat)
  double consumer_rate = 0;  // images/s the simulated consumer takes; 0: consume instantly
};

// How well the order mixes the dataset: the mean over an epoch's first batches (up to 2^20 samples)
// of the total-variation distance between a batch's histogram of shards and the epoch's
// (ops/diagnose/shuffle_quality.h; docs/mixing.md). Lower is better; `ideal` is the expected value
// for a uniformly random order, the floor.
struct ShuffleQuality {
  uint64_t shards = 0;
  uint64_t batches = 0;                              // the epoch's first batches the figures are over
  double loader = 0;                                 // the loader's order, with the bench's options
  double global = 0;                                 // a global shuffle
  std::vector<std::pair<uint64_t, double>> buffers;  // the streaming shuffle with a buffer of this many samples
  double ideal = 0;
};

// With buckets: how fast the loader made each bucket's batches (their fill time, all threads).
struct BucketRate {
  Bucket bucket;
  uint64_t batches = 0, images = 0;
  double fill_seconds = 0;
  double images_per_second = 0, pixels_per_second = 0;
};

struct BenchResult {
  uint64_t batches = 0;     // consumed
  uint64_t images = 0;      // consumed
  uint64_t bytes_read = 0;  // read by the loader, prefetched batches included
  uint64_t corrupt = 0;
  // The samples skipped as corrupt, one line each (Loader::TakeSkipReports), each once however many
  // epochs met it; at most kMaxSkipLines, `corrupt` counts them all.
  std::vector<std::string> skipped;
  static constexpr size_t kMaxSkipLines = 100;
  double open_seconds = 0;  // opening the dataset (indexes, manifest) before the first epoch
  double seconds = 0;       // the epochs, from the first StartEpoch to the last batch consumed
  double images_per_second = 0;
  double bytes_per_second = 0;
  double read_seconds = 0;    // summed over threads
  double decode_seconds = 0;  // decode + transform, summed over threads
  double consumer_wait_seconds = 0;
  double consumer_wait_share = 0;  // of the run's wall time: the share the consumer starved
  // How busy the loader kept the threads it was given: (read_seconds + decode_seconds) / (seconds x
  // threads), 1 when every thread read or decoded all the time. A loader that is the bottleneck but
  // well under 1 leaves cores idle. (Not the process's CPU time, cpu_seconds: oneTBB's idle workers
  // spin a while before they sleep, which counts as CPU time but does no work.)
  double cores_busy = 0;
  double cpu_seconds = 0;             // the process's CPU time over the epochs, all its threads
  bool keeps_up = true;               // with consumer_rate: the consumer waited under 5% of the time
  bool consumer_simulated = false;    // consumer_rate was given: keeps_up and the waits mean something
  bool predecoded = false;            // the dataset stores decoded pixels (raw): no decode to take off
  std::string device = "cpu";         // "cuda": images/s delivered into GPU memory (lib/cuda/cuda_bench.cc)
  double copy_seconds = 0;            // cuda: GPU time of the host-to-device copies and normalisation
  double copy_busy_share = 0;         // cuda: of the wall time; the rest the copy engine waited
  std::vector<std::string> warnings;  // Loader::warnings()
  ShuffleQuality shuffle_quality;     // of epoch 0, for buffers of 1,000 and 10,000 samples
  uint64_t pixels = 0;                // in the images consumed (each image's height x width)
  double pixels_per_second = 0;
  std::vector<BucketRate> buckets;  // with LoaderOptions::buckets: one per bucket, in their order
};

Status RunLoaderBench(const std::string& dataset, const BenchOptions& options, BenchResult* result);

}  // namespace shardpack
