// Noise images for tests of pixel operations (resampling, mirroring), where a pixel taken from the
// wrong place shows. Header-only: only the tests that use OpenCV include it.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <random>

namespace shardpack::testing {

// A rows x cols image of `type` whose every byte is drawn from std::mt19937(seed).
inline cv::Mat NoiseImage(int rows, int cols, int type, unsigned seed) {
  cv::Mat m(rows, cols, type);
  std::mt19937 rng(seed);
  for (int r = 0; r < rows; ++r) {
    uint8_t* p = m.ptr<uint8_t>(r);
    for (size_t k = 0; k < size_t(cols) * m.elemSize(); ++k) p[k] = uint8_t(rng() & 0xFF);
  }
  return m;
}

}  // namespace shardpack::testing
