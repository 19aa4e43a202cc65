// The normalisation kernel's launcher (ops/cuda/normalize.cu), for the CUDA feed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "shardpack/cuda_feed.h"

namespace shardpack {

// Queues on `stream`: out[n][c][y][x] = (in[n][y][x][c] - mean[c]) / std[c], converted to dtype
// (not kUint8).
cudaError_t LaunchNormalize(const uint8_t* in, void* out, DeviceDType dtype, uint32_t count, uint32_t height,
                            uint32_t width, const float mean[3], const float std[3], cudaStream_t stream);

}  // namespace shardpack
