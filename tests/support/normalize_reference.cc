#include "tests/support/normalize_reference.h"

#include <cstddef>

namespace shardpack {

void NormalizeNhwcToNchwReference(const uint8_t* nhwc, uint32_t count, uint32_t height, uint32_t width,
                                  const float mean[3], const float std[3], float* nchw) {
  const size_t hw = size_t(height) * width;
  for (size_t n = 0; n < count; ++n) {
    for (size_t c = 0; c < 3; ++c) {
      // The kernel's form: one multiply-add with the scale and shift folded per channel.
      const float scale = 1.0f / std[c], shift = -mean[c] / std[c];
      for (size_t p = 0; p < hw; ++p) nchw[(n * 3 + c) * hw + p] = float(nhwc[(n * hw + p) * 3 + c]) * scale + shift;
    }
  }
}

}  // namespace shardpack
