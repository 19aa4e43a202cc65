// What the CPU benchmark (loader_bench.cc) and the CUDA one (cuda/cuda_bench.cc) share: keeping
// the skipped samples' lines, and turning a finished run's totals into rates and a verdict.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "shardpack/loader_bench.h"

namespace shardpack {

// Adds the skip lines a loader just gave (TakeSkipReports) to r->skipped: each line once, however
// many epochs met its sample (`seen` holds those kept), and at most BenchResult::kMaxSkipLines.
void KeepSkipLines(std::vector<std::string> lines, std::set<std::string>* seen, BenchResult* r);

// Fills the rates and the verdict of a finished run from its totals and r->seconds.
void FinishBenchResult(const BenchOptions& options, BenchResult* r);

}  // namespace shardpack
