// `shardpack bench --device cuda`: the loader through the CUDA feed, measured as images/s delivered
// into GPU memory, with the share of the time the copy engine was busy and the consumer waited.
#pragma once

#include <string>

#include "shardpack/cuda_feed.h"
#include "shardpack/loader_bench.h"

namespace shardpack {

Status RunCudaBench(const std::string& dataset, const BenchOptions& options, DeviceDType dtype, BenchResult* result);

}  // namespace shardpack
