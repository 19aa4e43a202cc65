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

namespace shardpack {
namespace {

// A file that looks like WebP by its first bytes, whose header libwebp refuses, with "DICM" at byte
// 128 (found by fuzz_image; tests/fuzz/corpus/fuzz_image/webp-header-libwebp-refuses-with-dicm-at-128):
// OpenCV handed it to GDCM's DICOM reader, which aborted the process on an assert. Now a clear error.
TEST(DecodeImage, AWebPLibwebpRefusesNeverReachesAnotherDecoder) {
  const std::string bytes(
      "\x52\x49\x46\x46\x7A\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x4C\x56\x50\x38\x3A\x2F\x2F\x00\x00"
      "\x50\x02\x00\x9D\x01\x2A\x0B\x00\x06\x00\x02\xC0\x4C\x25\xB0\x02\x74\x7F\x00\x82\x64\xC6\x38\xBF"
      "\xF0\x96\x00\x00\xE1\xE1\x2F\x5E\x09\xE9\xC3\xAA\x0A\xEA\xE2\xD6\xAD\xDE\x27\x3F\x84\xA3\x56\x50"
      "\x97\x20\x7D\x01\x58\xDF\x4C\x2F\x5E\x2E\x20\xE0\xD8\x52\xFC\x57\x70\x99\xC0\xEF\x94\x30\x12\x8C"
      "\xE7\x76\xFA\xC6\xBF\x4E\x09\x3E\x86\xB3\xD7\xFC\x4F\xF3\x68\x74\x08\x99\xEC\x7B\xFD\x1A\xAE\x6B"
      "\xF2\xA6\x73\x57\x22\x78\xD7\xAB\x44\x49\x43\x4D\x00\x00",
      134);
  ASSERT_EQ(bytes.substr(128, 4), "DICM");
  ImageInfo info;
  ASSERT_TRUE(ProbeImage(bytes, &info).ok());
  EXPECT_EQ(info.format, ImageFormat::kWebp);
  DecodedImage image;
  const Status s = DecodeImage(bytes, 1 << 20, &image);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
  EXPECT_EQ(s.message(), "WebP header cannot be read (libwebp refuses it)");
}

}  // namespace
}  // namespace shardpack
