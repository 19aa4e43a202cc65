// The CPU reference of the CUDA normalisation kernel against values computed by hand. Built
// without CUDA, so it runs in CI; cuda_feed_test then holds the device to this reference.
#include "tests/support/normalize_reference.h"

#include <gtest/gtest.h>

namespace shardpack {
namespace {

TEST(NormalizeReference, IsTheAffineMapPerChannelIntoNchw) {
  const uint8_t nhwc[2 * 1 * 2 * 3] = {0, 10, 20, 30, 40, 50, 255, 128, 1, 2, 3, 4};  // 2 images of 1x2
  const float mean[3] = {10, 20, 30}, std[3] = {2, 4, 5};
  float out[12];
  NormalizeNhwcToNchwReference(nhwc, 2, 1, 2, mean, std, out);
  const float expected[12] = {(0 - 10) / 2.f,   (30 - 10) / 2.f, (10 - 20) / 4.f,  (40 - 20) / 4.f,
                              (20 - 30) / 5.f,  (50 - 30) / 5.f, (255 - 10) / 2.f, (2 - 10) / 2.f,
                              (128 - 20) / 4.f, (3 - 20) / 4.f,  (1 - 30) / 5.f,   (4 - 30) / 5.f};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << i;
}

}  // namespace
}  // namespace shardpack
