#include "formats/raw/raw_dataset_writer.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <zstd.h>

#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "formats/raw/raw_format.h"
#include "ground/checksum.h"
#include "ground/sample_table.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::DatasetTest;
using testing::MakeImage;
using testing::ReadFile;
using testing::WriteFile;

TEST(NpyHeader, IsWhatNumpyWrites) {
  const std::string h = NpyHeader("|u1", {7, 224, 224, 3});
  ASSERT_EQ(h.size(), kNpyHeaderBytes);
  EXPECT_EQ(h.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // header length 118
  EXPECT_EQ(h.substr(10, 69), "{'descr': '|u1', 'fortran_order': False, 'shape': (7, 224, 224, 3), }");
  EXPECT_EQ(h.back(), '\n');
  EXPECT_NE(NpyHeader("<i4", {5}).find("'shape': (5,)"), std::string::npos);
  NpyInfo info;
  ASSERT_TRUE(ParseNpyHeader(h, &info).ok());
  EXPECT_EQ(info.descr, "|u1");
  EXPECT_EQ(info.shape, (std::vector<uint64_t>{7, 224, 224, 3}));
  EXPECT_EQ(info.data_offset, kNpyHeaderBytes);
  EXPECT_EQ(ParseNpyHeader("\x93NUMPX", &info).message(), "not an .npy file (bad magic)");
}

// A chunk index as numpy writes int64 arrays: the header above, then little-endian values written
// out byte by byte here.
std::string ChunkIndex(const std::vector<int64_t>& offsets, const char* descr = "<i8") {
  std::string npy = NpyHeader(descr, {offsets.size()});
  for (int64_t v : offsets) {
    for (int b = 0; b < 8; ++b) npy.push_back(char((uint64_t(v) >> (8 * b)) & 0xff));
  }
  return npy;
}

TEST(RawChunkIndex, OffsetsMustStayInsideTheShardAndInOrder) {
  std::vector<int64_t> offsets;
  ASSERT_TRUE(ParseRawChunkIndex(ChunkIndex({0, 5, 9, 9}), 9, &offsets).ok());
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 5, 9, 9}));
  EXPECT_EQ(ParseRawChunkIndex(ChunkIndex({0, 5, 9}), 8, &offsets).message(),
            "chunk offset 9 is out of order or past the end of the shard (8 bytes)");
  EXPECT_TRUE(offsets.empty());
  EXPECT_EQ(ParseRawChunkIndex(ChunkIndex({0, 5, 4}), 9, &offsets).message(),
            "chunk offset 4 is out of order or past the end of the shard (9 bytes)");
  EXPECT_EQ(ParseRawChunkIndex(ChunkIndex({-1, 5}), 9, &offsets).message(),
            "chunk offset -1 is out of order or past the end of the shard (9 bytes)");
  EXPECT_EQ(ParseRawChunkIndex(ChunkIndex({0, 5}, "<i4"), 9, &offsets).message(),
            "not an int64 array of chunk offsets");
  const std::string whole = ChunkIndex({0, 5});
  EXPECT_EQ(ParseRawChunkIndex(whole.substr(0, whole.size() - 1), 9, &offsets).message(),
            "not an int64 array of chunk offsets");
  EXPECT_EQ(ParseRawChunkIndex(whole + "x", 9, &offsets).message(), "not an int64 array of chunk offsets");
}

TEST(DecodeAndTransform, ResizesShorterSideThenCentreCrops) {
  const std::string jpeg = MakeImage(ImageFormat::kJpeg, 200, 100, 3);
  TransformOptions t;
  t.resize_shorter = 50;
  DecodedImage out;
  ASSERT_TRUE(DecodeAndTransform(jpeg, t, &out).ok());
  EXPECT_EQ(out.width, 100u);
  EXPECT_EQ(out.height, 50u);
  t.crop_height = 40;
  t.crop_width = 30;
  ASSERT_TRUE(DecodeAndTransform(jpeg, t, &out).ok());
  EXPECT_EQ(out.width, 30u);
  EXPECT_EQ(out.height, 40u);
  EXPECT_EQ(out.rgb.size(), 30u * 40u * 3u);
}

// The crop of the scaled decode must match a full decode resized the same way, within a small
// tolerance (scaled DCT and area averaging differ slightly).
TEST(DecodeAndTransform, ScaledDecodeAgreesWithFullDecode) {
  const std::string rgb = testing::MakePixels(640, 480, 11, /*noise=*/4);
  const std::string jpeg = testing::EncodeJpeg(rgb, 640, 480, 95);
  TransformOptions t;
  t.resize_shorter = 120;
  t.crop_height = t.crop_width = 112;
  DecodedImage scaled, full;
  ASSERT_TRUE(DecodeAndTransform(jpeg, t, &scaled).ok());
  t.scaled_decode = false;
  ASSERT_TRUE(DecodeAndTransform(jpeg, t, &full).ok());
  ASSERT_EQ(scaled.rgb.size(), full.rgb.size());
  double sum = 0;
  for (size_t i = 0; i < full.rgb.size(); ++i) sum += std::abs(int(scaled.rgb[i]) - int(full.rgb[i]));
  EXPECT_LT(sum / full.rgb.size(), 2.0);
}

TEST(DecodeAndTransform, AppliesExifOrientation) {
  const std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 32, 5);
  const std::string rotated = testing::WithExifOrientation(jpeg, 6);
  EXPECT_EQ(JpegExifOrientation(rotated), 6);
  EXPECT_EQ(JpegExifOrientation(jpeg), 1);
  TransformOptions t;
  DecodedImage plain, turned;
  ASSERT_TRUE(DecodeAndTransform(jpeg, t, &plain).ok());
  ASSERT_TRUE(DecodeAndTransform(rotated, t, &turned).ok());
  ASSERT_EQ(turned.width, 32u);
  ASSERT_EQ(turned.height, 64u);
  // Rotating 90 degrees clockwise: output (x, y) is input (y, H-1-x).
  for (uint32_t y = 0; y < turned.height; y += 7) {
    for (uint32_t x = 0; x < turned.width; x += 5) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(turned.rgb[(y * turned.width + x) * 3 + c], plain.rgb[((31 - x) * plain.width + y) * 3 + c]);
      }
    }
  }
}

TEST(DecodeAndTransform, GreyCmykAndAlphaBecomeRgb) {
  DecodedImage out;
  // Greyscale JPEG.
  std::string grey(40 * 30, '\x80');
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(tj, reinterpret_cast<const unsigned char*>(grey.data()), 40, 0, 30, TJPF_GRAY, &buf, &size,
                        TJSAMP_GRAY, 95, 0),
            0);
  ASSERT_TRUE(DecodeAndTransform(std::string(reinterpret_cast<char*>(buf), size), {}, &out).ok());
  tjFree(buf);
  EXPECT_EQ(out.rgb.size(), 40u * 30u * 3u);
  EXPECT_NEAR(out.rgb[0], 128, 2);
  EXPECT_EQ(out.rgb[0], out.rgb[1]);
  // CMYK JPEG of pure (inverted) cyan: C=0 ink -> stored 255-..., libjpeg convention is inverted.
  std::string cmyk;
  for (int i = 0; i < 40 * 30; ++i) cmyk += std::string("\x00\xff\xff\xff", 4);  // inverted: full cyan ink
  buf = nullptr;
  ASSERT_EQ(tjCompress2(tj, reinterpret_cast<const unsigned char*>(cmyk.data()), 40, 0, 30, TJPF_CMYK, &buf, &size,
                        TJSAMP_444, 95, 0),
            0);
  ASSERT_TRUE(DecodeAndTransform(std::string(reinterpret_cast<char*>(buf), size), {}, &out).ok());
  tjFree(buf);
  tjDestroy(tj);
  EXPECT_NEAR(out.rgb[0], 0, 3);  // red absorbed by cyan ink
  EXPECT_NEAR(out.rgb[1], 255, 3);
  EXPECT_NEAR(out.rgb[2], 255, 3);
  // PNG with an alpha channel: alpha dropped, colour kept.
  cv::Mat bgra(10, 10, CV_8UC4, cv::Scalar(10, 20, 30, 0));
  std::vector<uchar> png;
  ASSERT_TRUE(cv::imencode(".png", bgra, png));
  ASSERT_TRUE(DecodeAndTransform(std::string(png.begin(), png.end()), {}, &out).ok());
  EXPECT_EQ(out.rgb[0], 30);
  EXPECT_EQ(out.rgb[1], 20);
  EXPECT_EQ(out.rgb[2], 10);
}

class RawPackTest : public DatasetTest {
 protected:
  PackOptions RawOptions() {
    PackOptions o = QuietOptions();
    o.format = DatasetFormat::kRaw;
    o.crop_height = 12;
    o.crop_width = 10;
    return o;
  }
};

TEST_F(RawPackTest, ShardsHoldCroppedPixelsLabelsAndKeys) {
  std::vector<std::string> paths = MakeTree(2, 5);
  PackOptions o = RawOptions();
  o.samples_per_shard = 6;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ASSERT_EQ(r.manifest.shards.size(), 2u);
  const std::string shard = ReadFile(out() + "/shard-000000.npy");
  NpyInfo info;
  ASSERT_TRUE(ParseNpyHeader(shard, &info).ok());
  EXPECT_EQ(info.shape, (std::vector<uint64_t>{6, 12, 10, 3}));
  EXPECT_EQ(shard.size(), kNpyHeaderBytes + 6 * 12 * 10 * 3);
  // Sample 3's pixels equal an independent transform of its source.
  TransformOptions t;
  t.resize_shorter = 12;
  t.crop_height = 12;
  t.crop_width = 10;
  DecodedImage expected;
  ASSERT_TRUE(DecodeAndTransform(ReadFile(src() + "/" + paths[3]), t, &expected).ok());
  EXPECT_EQ(shard.substr(kNpyHeaderBytes + 3 * 360, 360), std::string(expected.rgb.begin(), expected.rgb.end()));
  EXPECT_EQ(ReadFile(out() + "/shard-000001.keys.txt"), "000000006\n000000007\n000000008\n000000009\n");
  const std::string labels = ReadFile(out() + "/shard-000000.labels.npy");
  EXPECT_EQ(labels.substr(kNpyHeaderBytes), NpyInt32Body({0, 0, 0, 0, 0, 1}));
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.samples, 10u);
  DatasetStats st;
  ASSERT_TRUE(Stat(out(), {}, &st).ok());
  EXPECT_EQ(st.width.max, 10u);
  EXPECT_EQ(st.height.min, 12u);
}

TEST_F(RawPackTest, KeepSizeStoresOffsetsAndShapes) {
  MakeTree(1, 3);
  PackOptions o = QuietOptions();
  o.format = DatasetFormat::kRaw;
  o.keep_size = true;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  std::vector<SampleRecord> table;
  ASSERT_TRUE(ParseSampleTable(ReadFile(out() + "/shard-000000.samples.tsv"), &table).ok());
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[1].width, 25u);  // MakeTree: image i is (24 + i) x 16
  EXPECT_EQ(table[1].height, 16u);
  EXPECT_EQ(ReadFile(out() + "/shard-000000.offsets.npy").substr(kNpyHeaderBytes),
            NpyInt64Body({0, 24 * 16 * 3, 24 * 16 * 3 + 25 * 16 * 3, 24 * 16 * 3 + 25 * 16 * 3 + 26 * 16 * 3}));
  EXPECT_EQ(ReadFile(out() + "/shard-000000.shapes.npy").substr(kNpyHeaderBytes),
            NpyInt32Body({16, 24, 3, 16, 25, 3, 16, 26, 3}));
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean()) << (report.problems.empty() ? "" : report.problems[0].what);
}

TEST_F(RawPackTest, FlippedPixelIsPinnedToItsSampleAndLabelDamageIsFound) {
  MakeTree(1, 4);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), RawOptions(), &r).ok());
  std::string shard = ReadFile(out() + "/shard-000000.npy");
  shard[kNpyHeaderBytes + 2 * 360 + 17] ^= 1;
  WriteFile(out() + "/shard-000000.npy", shard);
  std::string labels = ReadFile(out() + "/shard-000000.labels.npy");
  labels[kNpyHeaderBytes] = 9;
  WriteFile(out() + "/shard-000000.labels.npy", labels);
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  std::set<std::string> found;
  for (const VerifyProblem& p : report.problems) found.insert(p.key + " | " + p.what);
  EXPECT_TRUE(found.count("000000002 | checksum mismatch: bytes of this sample changed"));
  EXPECT_TRUE(found.count(" | shard-000000.labels.npy: checksum mismatch (file changed since pack)"));
  EXPECT_TRUE(found.count("000000000 | shard-000000.labels.npy: label disagrees with the sample table"));
}

TEST_F(RawPackTest, DecompressionBombIsRefusedFromItsHeader) {
  MakeTree(1, 2);
  // A PNG whose IHDR declares 60000 x 60000 pixels (3.6 gigapixels) in a few hundred bytes.
  std::string png = MakeImage(ImageFormat::kPng, 8, 8, 1);
  const unsigned char big[8] = {0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60};
  std::memcpy(png.data() + 16, big, 8);
  WriteFile(src() + "/c0/bomb.png", png);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), RawOptions(), &r).ok());
  ASSERT_EQ(r.manifest.skipped.size(), 1u);
  EXPECT_EQ(r.manifest.skipped[0].reason, "image declares 60000x60000 pixels, more than --max-pixels 178956970");
  EXPECT_EQ(r.manifest.samples, 2u);
}

TEST_F(RawPackTest, ZstdChunksDecompressToThePlainShardsPixels) {
  MakeTree(2, 5);
  PackOptions o = RawOptions();
  PackResult plain, packed;
  ASSERT_TRUE(PackTo(out("plain"), o, &plain).ok());
  o.compress = RawCompression::kZstd;
  o.chunk_samples = 3;
  ASSERT_TRUE(PackTo(out("zstd"), o, &packed).ok());
  ASSERT_EQ(packed.manifest.shards[0].file, "shard-000000.zst");
  const std::string compressed = ReadFile(out("zstd") + "/shard-000000.zst");
  const std::string chunks = ReadFile(out("zstd") + "/shard-000000.chunks.npy");
  NpyInfo info;
  ASSERT_TRUE(ParseNpyHeader(chunks, &info).ok());
  ASSERT_EQ(info.shape, std::vector<uint64_t>{5});  // 10 images in chunks of 3: 4 chunks, 5 offsets
  std::string pixels;
  for (int c = 0; c < 4; ++c) {
    int64_t from, to;
    std::memcpy(&from, chunks.data() + kNpyHeaderBytes + 8 * c, 8);
    std::memcpy(&to, chunks.data() + kNpyHeaderBytes + 8 * (c + 1), 8);
    std::string chunk(ZSTD_getFrameContentSize(compressed.data() + from, to - from), '\0');
    ASSERT_EQ(ZSTD_decompress(chunk.data(), chunk.size(), compressed.data() + from, to - from), chunk.size());
    pixels += chunk;
  }
  EXPECT_EQ(pixels, ReadFile(out("plain") + "/shard-000000.npy").substr(kNpyHeaderBytes));
  VerifyReport report;
  ASSERT_TRUE(Verify(out("zstd"), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
  // Damage the second chunk: verify names its first sample.
  std::string damaged = compressed;
  int64_t second;
  std::memcpy(&second, chunks.data() + kNpyHeaderBytes + 8, 8);
  damaged[second + 20] ^= 0x55;
  WriteFile(out("zstd") + "/shard-000000.zst", damaged);
  ASSERT_TRUE(Verify(out("zstd"), VerifyOptions(), &report).ok());
  bool named = false;
  for (const VerifyProblem& p : report.problems) named |= p.key == "000000003";
  EXPECT_TRUE(named);
}

TEST_F(RawPackTest, OutputIsByteIdenticalWhateverTheThreadCount) {
  MakeTree(3, 6);
  PackResult a, b;
  PackOptions o = RawOptions();
  o.threads = 1;
  ASSERT_TRUE(PackTo(out("a") + "/ds", o, &a).ok());
  o.threads = 2;
  ASSERT_TRUE(PackTo(out("b") + "/ds", o, &b).ok());
  for (const char* f : {"shard-000000.npy", "shard-000000.labels.npy", "manifest.json"}) {
    EXPECT_EQ(ReadFile(out("a") + "/ds/" + f), ReadFile(out("b") + "/ds/" + f)) << f;
  }
}

}  // namespace
}  // namespace shardpack
