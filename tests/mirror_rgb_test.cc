#include "ground/mirror_rgb.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include "tests/support/noise_image.h"

namespace shardpack {
namespace {

// The definition, by hand: pixel (y, x) of the mirror is pixel (y, width - 1 - x) of the original,
// every channel byte of it.
void ExpectMirrorOf(const cv::Mat& original, const cv::Mat& mirrored) {
  ASSERT_EQ(mirrored.size(), original.size());
  const size_t pixel = original.elemSize();
  for (int y = 0; y < original.rows; ++y) {
    for (int x = 0; x < original.cols; ++x) {
      for (size_t c = 0; c < pixel; ++c) {
        ASSERT_EQ(mirrored.ptr<uint8_t>(y)[x * pixel + c],
                  original.ptr<uint8_t>(y)[(original.cols - 1 - x) * pixel + c])
            << original.cols << " wide, row " << y << ", column " << x << ", byte " << c;
      }
    }
  }
}

// Every width from 1 to 100 (the 16-pixel blocks from both ends, the pixels left in the middle one
// by one: 0 to 31 of them) and the training crop's 224 and its neighbours, on noise: the bytes of
// the definition and of cv::flip.
TEST(MirrorRgbInPlace, EveryWidthGivesTheMirrorAndCvFlipsBytes) {
  std::vector<int> widths;
  for (int w = 1; w <= 100; ++w) widths.push_back(w);
  for (int w : {223, 224, 225, 256, 511}) widths.push_back(w);
  for (int w : widths) {
    const cv::Mat original = testing::NoiseImage(3, w, CV_8UC3, unsigned(w));
    cv::Mat mirrored = original.clone();
    MirrorRgbInPlace(&mirrored);
    ExpectMirrorOf(original, mirrored);
    cv::Mat by_opencv;
    cv::flip(original, by_opencv, 1);
    ASSERT_EQ(cv::norm(mirrored, by_opencv, cv::NORM_INF), 0) << w << " wide";
  }
}

// A view into a larger image (rows not contiguous): the view's pixels are mirrored, the bytes
// around it left as they were.
TEST(MirrorRgbInPlace, AViewIsMirroredAndNothingAroundIt) {
  const cv::Mat original = testing::NoiseImage(40, 120, CV_8UC3, 11);
  cv::Mat image = original.clone();
  const cv::Rect inside(7, 5, 70, 30);
  cv::Mat view = image(inside);
  MirrorRgbInPlace(&view);
  ExpectMirrorOf(original(inside), image(inside));
  cv::Mat outside_now = image.clone(), outside_before = original.clone();
  outside_now(inside).setTo(0);
  outside_before(inside).setTo(0);
  EXPECT_EQ(cv::norm(outside_now, outside_before, cv::NORM_INF), 0);
}

// Other pixel sizes (a label mask's 1 byte, RGBA's 4) are cv::flip's: still the mirror.
TEST(MirrorRgbInPlace, OtherPixelTypesAreMirroredToo) {
  for (int type : {CV_8UC1, CV_8UC4, CV_16UC3}) {
    const cv::Mat original = testing::NoiseImage(4, 37, type, 5);
    cv::Mat mirrored = original.clone();
    MirrorRgbInPlace(&mirrored);
    ExpectMirrorOf(original, mirrored);
  }
}

}  // namespace
}  // namespace shardpack
