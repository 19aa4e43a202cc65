// JpegRegionDecoder against TurboJPEG's whole-image decode of the same file: the decoded region
// must hold exactly the pixels a whole decode has there, for every chroma subsampling, grey,
// progressive and CMYK JPEGs, at full and reduced DCT scales, with boxes at every edge.
#include "ground/jpeg_region_decoder.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "ground/coefficient_budget.h"
#include "tests/support/image_factory.h"

namespace shardpack {
namespace {

struct Variant {
  const char* name;
  int subsamp;       // TJSAMP_*
  int pixel_format;  // TJPF_RGB, or TJPF_CMYK for a CMYK JPEG
  int flags;         // TJFLAG_PROGRESSIVE or 0
};

std::string Encode(const Variant& v, int w, int h) {
  std::string pixels = testing::MakePixels(w, h, 7);
  if (v.pixel_format == TJPF_CMYK) {  // any 4-channel data: CMYK is stored as it is given
    std::string cmyk;
    for (size_t i = 0; i < pixels.size(); i += 3) cmyk += pixels.substr(i, 3) + char(200 + i % 50);
    pixels = cmyk;
  }
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(tj, reinterpret_cast<const unsigned char*>(pixels.data()), w, 0, h, v.pixel_format, &out,
                             &size, v.subsamp, 90, v.flags);
  std::string jpeg = rc == 0 ? std::string(reinterpret_cast<char*>(out), size) : std::string();
  tjFree(out);
  tjDestroy(tj);
  return jpeg;
}

// The whole image at scale num/8, as RGB (CMYK converted as the decoder does).
std::vector<uint8_t> WholeDecode(const std::string& jpeg, int num, int* w, int* h) {
  tjhandle tj = tjInitDecompress();
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  tjDecompressHeader3(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), &width, &height, &subsamp,
                      &colorspace);
  const tjscalingfactor f{num, 8};
  *w = TJSCALED(width, f);
  *h = TJSCALED(height, f);
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  std::vector<uint8_t> out(size_t(*w) * *h * (cmyk ? 4 : 3));
  EXPECT_EQ(tjDecompress2(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), out.data(), *w, 0, *h,
                          cmyk ? TJPF_CMYK : TJPF_RGB, 0),
            0);
  tjDestroy(tj);
  if (!cmyk) return out;
  std::vector<uint8_t> rgb(size_t(*w) * *h * 3);
  for (size_t i = 0; i < size_t(*w) * *h; ++i) {
    for (int c = 0; c < 3; ++c) rgb[i * 3 + c] = uint8_t((out[i * 4 + c] * out[i * 4 + 3] + 127) / 255);
  }
  return rgb;
}

class RegionTest : public ::testing::TestWithParam<Variant> {};

TEST_P(RegionTest, RegionEqualsWholeDecodeThere) {
  const int W = 203, H = 157;  // not multiples of any iMCU size
  const std::string jpeg = Encode(GetParam(), W, H);
  ASSERT_FALSE(jpeg.empty());
  struct Case {
    cv::Rect2d box;
    cv::Size min_size;
    int expected_num;  // the DCT scale (num/8) the decoder must pick
  };
  const Case cases[] = {
      {{0, 0, W, H}, {W, H}, 8},             // everything
      {{37.4, 21.9, 101, 77}, {90, 70}, 8},  // interior, fractional origin
      {{0, 100, 60, 57}, {60, 57}, 8},       // bottom-left corner
      {{150, 0, 53, 40}, {53, 40}, 8},       // top-right corner
      {{17, 33, 180, 120}, {80, 55}, 4},     // shrinks 2x: half scale
      {{5, 9, 190, 140}, {40, 30}, 2},       // quarter scale
      {{0, 0, W, H}, {20, 15}, 1},           // eighth scale
  };
  JpegRegionDecoder decoder;
  for (const Case& c : cases) {
    SCOPED_TRACE(GetParam().name + std::string(" box ") + std::to_string(c.box.x) + "," + std::to_string(c.box.y));
    ASSERT_TRUE(decoder.ReadHeader(jpeg, 1u << 30).ok());
    EXPECT_EQ(decoder.size(), cv::Size(W, H));
    cv::Mat region;
    cv::Rect2d in_region;
    const Status s = decoder.DecodeRegion(c.box, c.min_size, false, &region, &in_region);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const double scale = c.expected_num / 8.0;
    EXPECT_DOUBLE_EQ(in_region.width, c.box.width * scale);
    EXPECT_DOUBLE_EQ(in_region.height, c.box.height * scale);
    // The region's origin in the scaled image: whole pixels, at or before the box.
    const double ox = c.box.x * scale - in_region.x, oy = c.box.y * scale - in_region.y;
    ASSERT_EQ(ox, std::floor(ox));
    ASSERT_EQ(oy, std::floor(oy));
    int sw = 0, sh = 0;
    const std::vector<uint8_t> whole = WholeDecode(jpeg, c.expected_num, &sw, &sh);
    // The region covers the box and a pixel around it (what a bilinear resize may read), and there
    // it holds exactly the whole decode's pixels.
    const int bx0 = std::max(0, int(std::floor(c.box.x * scale)) - 1),
              by0 = std::max(0, int(std::floor(c.box.y * scale)) - 1);
    const int bx1 = std::min(sw, int(std::ceil((c.box.x + c.box.width) * scale)) + 1);
    const int by1 = std::min(sh, int(std::ceil((c.box.y + c.box.height) * scale)) + 1);
    ASSERT_LE(ox, bx0);
    ASSERT_LE(oy, by0);
    ASSERT_GE(ox + region.cols, bx1);
    ASSERT_GE(oy + region.rows, by1);
    size_t mismatches = 0;
    for (int y = by0; y < by1; ++y) {
      const uint8_t* row = region.ptr<uint8_t>(int(y - oy));
      for (int x = bx0 * 3; x < bx1 * 3; ++x) mismatches += row[size_t(x - ox * 3)] != whole[size_t(y) * sw * 3 + x];
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Jpegs, RegionTest,
                         ::testing::Values(Variant{"444", TJSAMP_444, TJPF_RGB, 0},
                                           Variant{"422", TJSAMP_422, TJPF_RGB, 0},
                                           Variant{"420", TJSAMP_420, TJPF_RGB, 0},
                                           Variant{"440", TJSAMP_440, TJPF_RGB, 0},
                                           Variant{"gray", TJSAMP_GRAY, TJPF_RGB, 0},
                                           Variant{"progressive", TJSAMP_420, TJPF_RGB, TJFLAG_PROGRESSIVE},
                                           Variant{"cmyk", TJSAMP_444, TJPF_CMYK, 0}),
                         [](const ::testing::TestParamInfo<Variant>& i) { return std::string(i.param.name); });

TEST(JpegRegionDecoder, RefusesTooManyPixelsFromTheHeader) {
  const std::string jpeg = testing::EncodeJpeg(testing::MakePixels(64, 48, 1), 64, 48);
  JpegRegionDecoder decoder;
  const Status s = decoder.ReadHeader(jpeg, 64 * 48 - 1);
  EXPECT_EQ(s.ToString(), "corrupt input: image of 64x48 pixels exceeds the limit of 3071 pixels");
}

TEST(JpegRegionDecoder, CorruptDataIsAnErrorAndTheDecoderStaysUsable) {
  const std::string good = testing::EncodeJpeg(testing::MakePixels(64, 48, 1), 64, 48);
  std::string bad = good;
  bad.resize(good.size() / 2);  // entropy-coded data cut short
  JpegRegionDecoder decoder;
  cv::Mat region;
  cv::Rect2d box;
  ASSERT_TRUE(decoder.ReadHeader(bad, 1u << 30).ok());
  const Status s = decoder.DecodeRegion(cv::Rect2d(0, 0, 64, 48), cv::Size(64, 48), false, &region, &box);
  EXPECT_EQ(s.ToString(), "corrupt input: JPEG data: Premature end of JPEG file");
  EXPECT_EQ(decoder.ReadHeader("\xff\xd8garbage", 1u << 30).ToString(),
            "corrupt input: JPEG header: Premature end of JPEG file");
  ASSERT_TRUE(decoder.ReadHeader(good, 1u << 30).ok());
  EXPECT_TRUE(decoder.DecodeRegion(cv::Rect2d(0, 0, 64, 48), cv::Size(64, 48), false, &region, &box).ok());
  EXPECT_EQ(region.size(), cv::Size(64, 48));
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

// A progressive decode holds the whole image's coefficients (2 bytes each, 64 a block): by hand,
// 640x480 at 4:2:0 is 80x60 luma blocks and 40x30 blocks of each chroma plane, 7200 blocks.
TEST(CoefficientBudget, AProgressiveDecodeCountsTheWholeImagesCoefficients) {
  JpegRegionDecoder decoder;
  ASSERT_TRUE(
      decoder.ReadHeader(Encode({"progressive", TJSAMP_420, TJPF_RGB, TJFLAG_PROGRESSIVE}, 640, 480), 1 << 30).ok());
  EXPECT_EQ(decoder.CoefficientBytes(), 7200u * 128);
  ASSERT_TRUE(
      decoder.ReadHeader(Encode({"progressive 4:4:4", TJSAMP_444, TJPF_RGB, TJFLAG_PROGRESSIVE}, 640, 480), 1 << 30)
          .ok());
  EXPECT_EQ(decoder.CoefficientBytes(), 3u * 4800 * 128);
  ASSERT_TRUE(decoder.ReadHeader(Encode({"baseline", TJSAMP_420, TJPF_RGB, 0}, 640, 480), 1 << 30).ok());
  EXPECT_EQ(decoder.CoefficientBytes(), 0u);  // a few rows at a time
}

// Eight threads decode progressive JPEGs at once under a budget of two and a half images: never
// more than the budget is held, every decode still equals TurboJPEG's, and an image larger than
// the whole budget decodes alone.
TEST(CoefficientBudget, ProgressiveDecodesInFlightStayWithinTheBudget) {
  const std::string jpeg = Encode({"progressive", TJSAMP_420, TJPF_RGB, TJFLAG_PROGRESSIVE}, 640, 480);
  int w = 0, h = 0;
  const std::vector<uint8_t> want = WholeDecode(jpeg, 8, &w, &h);
  CoefficientBudget& budget = CoefficientBudget::Process();
  const uint64_t one = 7200u * 128;
  budget.set_limit(one * 5 / 2);
  budget.reset_peak();
  std::vector<std::thread> threads;
  std::vector<int> equal(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      JpegRegionDecoder decoder;
      for (int i = 0; i < 6; ++i) {
        cv::Mat pixels;
        if (!decoder.ReadHeader(jpeg, 1 << 30).ok() || !decoder.DecodeWhole(false, &pixels).ok()) return;
        equal[t] += std::equal(want.begin(), want.end(), pixels.data) ? 1 : 0;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(equal, std::vector<int>(8, 6));
  EXPECT_GE(budget.peak(), one);
  EXPECT_LE(budget.peak(), 2 * one);  // two fit in two and a half; a third waits
  budget.set_limit(one / 2);          // one image is larger than the whole budget: it still decodes
  JpegRegionDecoder decoder;
  cv::Mat pixels;
  ASSERT_TRUE(decoder.ReadHeader(jpeg, 1 << 30).ok());
  EXPECT_TRUE(decoder.DecodeWhole(false, &pixels).ok());
  budget.set_limit(CoefficientBudget::kDefaultBytes);
}

}  // namespace
}  // namespace shardpack
