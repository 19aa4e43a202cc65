#include "ground/bilinear_resample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/support/noise_image.h"

namespace shardpack {
namespace {

// The definition, in double precision: pixel (i, j) of the output samples the source at
// (box.x + (j + 0.5) * sx - 0.5, box.y + (i + 0.5) * sy - 0.5), bilinearly, edges replicated.
double Reference(const cv::Mat& src, const cv::Rect2d& box, cv::Size out, int i, int j, int c) {
  const double x = box.x + (j + 0.5) * box.width / out.width - 0.5;
  const double y = box.y + (i + 0.5) * box.height / out.height - 0.5;
  const int x0 = int(std::floor(x)), y0 = int(std::floor(y));
  const double fx = x - x0, fy = y - y0;
  auto at = [&](int r, int col) {
    r = std::clamp(r, 0, src.rows - 1);
    col = std::clamp(col, 0, src.cols - 1);
    return double(src.ptr<uint8_t>(r)[col * src.channels() + c]);
  };
  return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
         fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
}

// Every output value close to the exact bilinear value, for shrinking, enlarging, boxes at sub-pixel
// offsets and boxes past the edges. The bound: 8-bit weights round each axis' position by up to
// 1/512 pixel, worth up to 255/512 of a level on noise, plus half a level of final rounding. A
// sampling position off by even a tenth of a pixel misses it by tens of levels on this noise.
TEST(ResampleBilinear, EveryPixelIsWithinOneLevelOfExactBilinearSampling) {
  struct Case {
    cv::Size src;
    int type;
    cv::Rect2d box;
    cv::Size out;
  };
  const Case cases[] = {
      {{341, 256}, CV_8UC3, {86.3, 23.47, 328.1, 328.1}, {224, 224}},  // pack --format raw's centre crop
      {{100, 80}, CV_8UC3, {0, 0, 100, 80}, {77, 61}},
      {{50, 40}, CV_8UC3, {3.9, 2.2, 20.5, 17.25}, {64, 48}},  // enlarging
      {{60, 60}, CV_8UC1, {-4.5, 50.25, 30, 20}, {25, 19}},    // past the top-left and bottom edges
      {{33, 29}, CV_8UC4, {0.5, 0.5, 32, 28}, {31, 27}},
  };
  for (const Case& t : cases) {
    const cv::Mat src = testing::NoiseImage(t.src.height, t.src.width, t.type, 7);
    cv::Mat dst;
    ResampleBilinear(src, t.box, t.out, &dst);
    ASSERT_EQ(dst.size(), t.out);
    ASSERT_EQ(dst.type(), t.type);
    double worst = 0, total = 0;
    for (int i = 0; i < t.out.height; ++i) {
      for (int j = 0; j < t.out.width; ++j) {
        for (int c = 0; c < src.channels(); ++c) {
          const double diff =
              std::abs(dst.ptr<uint8_t>(i)[j * src.channels() + c] - Reference(src, t.box, t.out, i, j, c));
          worst = std::max(worst, diff);
          total += diff;
        }
      }
    }
    EXPECT_LE(worst, 1.5) << t.src << " " << t.box << " -> " << t.out;
    EXPECT_LE(total / (double(t.out.area()) * src.channels()), 0.35) << t.src << " " << t.box << " -> " << t.out;
  }
}

// A box of the output's size at a whole-pixel offset is a plain copy.
TEST(ResampleBilinear, AnUnscaledBoxAtWholePixelsIsACopy) {
  const cv::Mat src = testing::NoiseImage(40, 50, CV_8UC3, 3);
  cv::Mat dst;
  ResampleBilinear(src, cv::Rect2d(7, 5, 30, 20), cv::Size(30, 20), &dst);
  EXPECT_EQ(cv::norm(dst, src(cv::Rect(7, 5, 30, 20)), cv::NORM_INF), 0.0);
}

}  // namespace
}  // namespace shardpack
