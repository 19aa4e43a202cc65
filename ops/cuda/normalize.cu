// The one kernel of the CUDA feed: uint8 NHWC in, normalised NCHW out, in one pass over the batch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ops/cuda/normalize.h"

namespace shardpack {
namespace {

template <typename T>
__device__ T Convert(float v);
template <>
__device__ float Convert<float>(float v) {
  return v;
}
template <>
__device__ __half Convert<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 Convert<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

struct Affine {
  float scale[3], shift[3];  // out = in * scale + shift, i.e. (in - mean) / std
};

// One thread per output element, in output order, so that the writes coalesce; each reads one byte.
template <typename T>
__global__ void NormalizeKernel(const uint8_t* __restrict__ in, T* __restrict__ out, uint32_t count, uint32_t hw,
                                Affine a) {
  const uint64_t total = uint64_t(count) * 3 * hw;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < total; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t n = i / (3 * uint64_t(hw));
    const uint32_t rest = uint32_t(i - n * 3 * hw);
    const uint32_t c = rest / hw, p = rest - c * hw;
    const float v = float(in[(n * hw + p) * 3 + c]);
    out[i] = Convert<T>(v * a.scale[c] + a.shift[c]);
  }
}

}  // namespace

cudaError_t LaunchNormalize(const uint8_t* in, void* out, DeviceDType dtype, uint32_t count, uint32_t height,
                            uint32_t width, const float mean[3], const float std[3], cudaStream_t stream) {
  Affine a;
  for (int c = 0; c < 3; ++c) {
    a.scale[c] = 1.0f / std[c];
    a.shift[c] = -mean[c] / std[c];
  }
  const uint32_t hw = height * width;
  const uint64_t total = uint64_t(count) * 3 * hw;
  const int threads = 256;
  const int blocks = int(total / threads + 1 < 65535 * 8 ? total / threads + 1 : 65535 * 8);
  switch (dtype) {
    case DeviceDType::kFloat32:
      NormalizeKernel<float><<<blocks, threads, 0, stream>>>(in, static_cast<float*>(out), count, hw, a);
      break;
    case DeviceDType::kFloat16:
      NormalizeKernel<__half><<<blocks, threads, 0, stream>>>(in, static_cast<__half*>(out), count, hw, a);
      break;
    case DeviceDType::kBFloat16:
      NormalizeKernel<__nv_bfloat16>
          <<<blocks, threads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), count, hw, a);
      break;
    case DeviceDType::kUint8:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace shardpack
