#include <gtest/gtest.h>

#include "shardpack/image.h"
#include "tests/support/image_factory.h"

namespace shardpack {
namespace {

using testing::MakeImage;

struct FormatCase {
  ImageFormat format;
  const char* name;
};

class ProbeEveryFormat : public ::testing::TestWithParam<FormatCase> {};

TEST_P(ProbeEveryFormat, ReadsFormatAndDimensions) {
  std::string bytes = MakeImage(GetParam().format, 37, 21, 7);
  ImageInfo info;
  ASSERT_TRUE(ProbeImage(bytes, &info).ok());
  EXPECT_EQ(info.format, GetParam().format);
  EXPECT_EQ(info.width, 37u);
  EXPECT_EQ(info.height, 21u);
  EXPECT_STREQ(ImageFormatName(info.format), GetParam().name);
}

TEST_P(ProbeEveryFormat, RejectsTruncatedFile) {
  std::string bytes = MakeImage(GetParam().format, 64, 48, 7);
  ImageInfo info;
  Status s = ProbeImage(bytes.substr(0, bytes.size() / 2), &info);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST_P(ProbeEveryFormat, DecodesToTheSameSize) {
  std::string bytes = MakeImage(GetParam().format, 40, 30, 9);
  DecodedImage image;
  ASSERT_TRUE(DecodeImage(bytes, 1 << 20, &image).ok());
  EXPECT_EQ(image.width, 40u);
  EXPECT_EQ(image.height, 30u);
  EXPECT_EQ(image.rgb.size(), 40u * 30u * 3u);
}

INSTANTIATE_TEST_SUITE_P(Formats, ProbeEveryFormat,
                         ::testing::Values(FormatCase{ImageFormat::kJpeg, "jpeg"}, FormatCase{ImageFormat::kPng, "png"},
                                           FormatCase{ImageFormat::kWebp, "webp"},
                                           FormatCase{ImageFormat::kBmp, "bmp"}),
                         [](const ::testing::TestParamInfo<FormatCase>& info) { return std::string(info.param.name); });

TEST(ProbeImage, EmptyFile) {
  ImageInfo info;
  Status s = ProbeImage("", &info);
  EXPECT_EQ(s.message(), "empty file");
}

TEST(ProbeImage, NotAnImage) {
  ImageInfo info;
  Status s = ProbeImage("hello, this is a text file\n", &info);
  EXPECT_EQ(s.message(), "not a supported image (JPEG, PNG, WebP, BMP)");
}

TEST(ProbeImage, JpegWithoutEndMarkerIsTruncated) {
  std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 48, 3);
  ImageInfo info;
  Status s = ProbeImage(jpeg.substr(0, jpeg.size() - 2), &info);
  EXPECT_EQ(s.message(), "truncated JPEG: no end-of-image marker after the image data");
}

TEST(ProbeImage, JpegWithTrailingBytesIsAccepted) {
  std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 48, 3) + std::string(100, 'x');
  ImageInfo info;
  EXPECT_TRUE(ProbeImage(jpeg, &info).ok());
}

TEST(ProbeImage, JpegWithGarbageHeaderIsCorrupt) {
  std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 48, 3);
  jpeg[2] = '\xFF';
  jpeg[3] = '\xFF';
  for (size_t i = 4; i < 40; ++i) jpeg[i] = 'A';
  ImageInfo info;
  Status s = ProbeImage(jpeg, &info);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
  EXPECT_NE(s.message().find("JPEG"), std::string::npos) << s.message();
}

TEST(DecodeImage, CorruptJpegDataFails) {
  std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 48, 3);
  // Damage the entropy-coded data but keep the end marker, so the header probe passes.
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 64; ++i) jpeg[i] = '\xFF';
  ImageInfo info;
  ASSERT_TRUE(ProbeImage(jpeg, &info).ok());
  DecodedImage image;
  Status s = DecodeImage(jpeg, 1 << 20, &image);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
}

TEST(DecodeImage, RefusesMorePixelsThanTheLimit) {
  std::string png = MakeImage(ImageFormat::kPng, 100, 100, 3);
  DecodedImage image;
  Status s = DecodeImage(png, 9999, &image);
  EXPECT_EQ(s.message(), "image of 100x100 pixels exceeds the limit of 9999 pixels");
  EXPECT_TRUE(image.rgb.empty());
}

}  // namespace
}  // namespace shardpack
