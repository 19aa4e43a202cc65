// DecodeCrop on JPEGs stored sideways (an EXIF orientation, as phones store portraits): the crop is
// chosen on the image as shown, decoded from where it lies in the stored image, then turned upright.
// References: OpenCV's own decode, which applies the EXIF orientation itself, and a JPEG cut short
// below the rows a crop needs (a decode of the whole image fails on it; one of the crop's rows does not).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "ground/image_decode_rgb.h"
#include "tests/support/image_factory.h"

namespace shardpack {
namespace {

constexpr uint64_t kMaxPixels = 1u << 30;

// The image as shown, decoded by OpenCV (EXIF orientation applied by OpenCV), as RGB.
cv::Mat OpenCvShown(const std::string& jpeg) {
  const cv::Mat encoded(1, int(jpeg.size()), CV_8UC1, const_cast<char*>(jpeg.data()));
  cv::Mat bgr = cv::imdecode(encoded, cv::IMREAD_COLOR), rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return rgb;
}

// DecodeCrop with a fixed plan, checking the size the plan is chosen on.
Status Crop(const std::string& jpeg, const CropPlan& plan, cv::Size expect_shown, cv::Mat* out) {
  cv::Size seen;
  const Status s = DecodeCrop(
      jpeg, kMaxPixels,
      [&](cv::Size shown) {
        seen = shown;
        return plan;
      },
      /*fast=*/false, out);
  EXPECT_EQ(seen, expect_shown);
  return s;
}

int MaxDiff(const cv::Mat& a, const cv::Mat& b) {
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  double max = 0;
  cv::minMaxLoc(diff.reshape(1), nullptr, &max);
  return int(max);
}

TEST(OrientedBoxes, BoxAsStoredUndoesBoxAsShown) {
  const cv::Size stored(203, 157);
  const cv::Rect2d box(12.25, 40.5, 101.75, 63.125);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const cv::Size shown = SizeAsShown(stored, o);
    EXPECT_EQ(shown, o >= 5 ? cv::Size(157, 203) : stored);
    const cv::Rect2d there = BoxAsShown(box, o, stored);
    EXPECT_EQ(BoxAsStored(there, o, stored), box);
    // The box stays inside the shown image, with the same area.
    EXPECT_GE(there.x, 0);
    EXPECT_GE(there.y, 0);
    EXPECT_LE(there.x + there.width, shown.width);
    EXPECT_LE(there.y + there.height, shown.height);
    EXPECT_DOUBLE_EQ(there.area(), box.area());
  }
}

// Every orientation, against OpenCV's decode of the whole image as shown: crops at full scale hold the
// same pixels; a crop shrunk 3x (decoded at half scale, then resized) is close to OpenCV's pixels
// shrunk by area averaging.
TEST(DecodeCrop, ATurnedJpegIsCutWhereItIsShown) {
  const int W = 203, H = 157;  // stored; not multiples of an iMCU
  const std::string upright = testing::EncodeJpeg(testing::MakePixels(W, H, 11, 0), W, H, 95);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const std::string jpeg = o == 1 ? upright : testing::WithExifOrientation(upright, uint16_t(o));
    const cv::Mat reference = OpenCvShown(jpeg);
    const cv::Size shown(reference.cols, reference.rows);
    ASSERT_EQ(shown, o >= 5 ? cv::Size(H, W) : cv::Size(W, H));

    CropPlan whole;
    whole.box = cv::Rect2d(0, 0, shown.width, shown.height);
    whole.out = shown;
    whole.reduced_dct = false;
    cv::Mat out;
    ASSERT_TRUE(Crop(jpeg, whole, shown, &out).ok());
    EXPECT_LE(MaxDiff(out, reference), 1);

    // An off-centre box near a corner of the shown image: a turn taken the wrong way reads elsewhere.
    const cv::Rect corner(shown.width / 2 + 7, 9, shown.width / 2 - 20, shown.height / 3);
    CropPlan cut;
    cut.box = cv::Rect2d(corner);
    cut.out = corner.size();
    cut.reduced_dct = false;
    ASSERT_TRUE(Crop(jpeg, cut, shown, &out).ok());
    EXPECT_LE(MaxDiff(out, reference(corner)), 1);

    const cv::Rect big(5, shown.height / 4, shown.width - 11, shown.height / 2);
    CropPlan shrunk;
    shrunk.box = cv::Rect2d(big);
    shrunk.out = cv::Size(big.width / 3, big.height / 3);
    ASSERT_TRUE(Crop(jpeg, shrunk, shown, &out).ok());
    cv::Mat expected;
    cv::resize(reference(big), expected, shrunk.out, 0, 0, cv::INTER_AREA);
    EXPECT_GT(cv::PSNR(out, expected), 35.0);
  }
}

// A crop whose box lies in the stored image's top rows decodes those rows only, whichever way the
// image is turned to be shown: it succeeds on a JPEG cut short below them (its end-of-image marker put
// back, as ProbeImage wants one), with the pixels of the whole file. The box on the other side needs
// the missing rows and fails with libjpeg's message.
TEST(DecodeCrop, ATurnedJpegDecodesOnlyTheStoredRowsItsBoxNeeds) {
  const int W = 320, H = 240;  // stored; the top 72 rows (30%) hold each `near` box below
  const std::string upright = testing::EncodeJpeg(testing::MakePixels(W, H, 5, 24), W, H, 90);
  struct Case {
    int orientation;
    cv::Rect near, far;  // in the image as shown, worked out by hand from the EXIF turns
  };
  const Case cases[] = {
      {1, {0, 0, 320, 72}, {0, 168, 320, 72}},  // upright: the top rows are the top rows
      {3, {0, 168, 320, 72}, {0, 0, 320, 72}},  // half a turn: they are shown at the bottom
      {6, {168, 0, 72, 320}, {0, 0, 72, 320}},  // a quarter clockwise: on the right
      {8, {0, 0, 72, 320}, {168, 0, 72, 320}},  // a quarter counter-clockwise: on the left
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("orientation " + std::to_string(c.orientation));
    const std::string jpeg =
        c.orientation == 1 ? upright : testing::WithExifOrientation(upright, uint16_t(c.orientation));
    const std::string cut = jpeg.substr(0, jpeg.size() * 6 / 10) + "\xFF\xD9";
    const cv::Size shown = c.orientation >= 5 ? cv::Size(H, W) : cv::Size(W, H);
    CropPlan plan;
    plan.box = cv::Rect2d(c.near);
    plan.out = c.near.size();
    plan.reduced_dct = false;
    cv::Mat from_cut, from_whole;
    const Status s = Crop(cut, plan, shown, &from_cut);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(Crop(jpeg, plan, shown, &from_whole).ok());
    EXPECT_EQ(MaxDiff(from_cut, from_whole), 0);
    EXPECT_LE(MaxDiff(from_whole, OpenCvShown(jpeg)(c.near)), 1);

    plan.box = cv::Rect2d(c.far);
    plan.out = c.far.size();
    EXPECT_EQ(Crop(cut, plan, shown, &from_cut).ToString(),
              "corrupt input: JPEG data: Corrupt JPEG data: premature end of data segment");
  }
}

}  // namespace
}  // namespace shardpack
