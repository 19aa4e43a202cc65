// What the CUDA feed's normalisation kernel (ops/cuda/normalize.cu) computes, written plainly on
// the CPU: the reference its device test compares against. It needs no CUDA, so its own test
// (normalize_reference_test.cc) runs in every build.
#pragma once

#include <cstdint>

namespace shardpack {

// NHWC uint8 (count images of height x width x 3) -> NCHW float, (x - mean[c]) / std[c].
void NormalizeNhwcToNchwReference(const uint8_t* nhwc, uint32_t count, uint32_t height, uint32_t width,
                                  const float mean[3], const float std[3], float* nchw);

}  // namespace shardpack
