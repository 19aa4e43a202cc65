// The host-to-device stage of `shardpack doctor`: how fast whole batches reach GPU memory from
// pageable and from pinned host memory (include/shardpack/doctor.h, HostToDeviceBench).
#pragma once

#include "shardpack/doctor.h"

namespace shardpack {

// Copies a batch of `batch_bytes` to the current device, first from pageable then from pinned
// memory, each for half of `seconds` (at least 3 copies). Unsupported without a CUDA device;
// IOError naming the CUDA call that failed otherwise.
Status MeasureHostToDevice(uint64_t batch_bytes, double seconds, HostToDeviceFigures* figures);

}  // namespace shardpack
