// What the CPU benchmark (loader_bench.cc) and the CUDA one (cuda/cuda_bench.cc) share: turning a
// finished run's totals into rates and a verdict.
#pragma once

#include "shardpack/loader_bench.h"

namespace shardpack {

// Fills the rates and the verdict of a finished run from its totals and r->seconds.
void FinishBenchResult(const BenchOptions& options, BenchResult* r);

}  // namespace shardpack
