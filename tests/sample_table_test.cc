// The sample table's parser (ground/sample_table.h) and the checksum digits it reads
// (ParseChecksumHex), on lines written by hand: the fields a line gives, and the lines refused.
#include "ground/sample_table.h"

#include <gtest/gtest.h>

#include "ground/checksum.h"

namespace shardpack {
namespace {

TEST(ParseChecksumHex, ReadsSixteenLowerCaseDigitsOnly) {
  uint64_t v = 0;
  ASSERT_TRUE(ParseChecksumHex("0123456789abcdef", &v));
  EXPECT_EQ(v, 0x0123456789abcdefULL);
  ASSERT_TRUE(ParseChecksumHex("ffffffffffffffff", &v));
  EXPECT_EQ(v, ~uint64_t(0));
  for (const char* bad : {"0123456789ABCDEF", "0123456789abcdeg", "0123456789abcde", "0123456789abcdef0",
                          "0123456789abcde/", "0123456789abcde:", "0123456789abcde`", " 123456789abcdef"}) {
    v = 7;
    EXPECT_FALSE(ParseChecksumHex(bad, &v)) << bad;
    EXPECT_EQ(v, 7u) << bad;
  }
  EXPECT_FALSE(ParseChecksumHex(std::string_view("0123456789abcd\0f", 16), &v));
  EXPECT_FALSE(
      ParseChecksumHex("0123456789abcd\xe5"
                       "f",
                       &v));
}

TEST(ParseSampleTable, ReadsEachFieldAndRefusesLinesOfOtherWidths) {
  const std::string header = kSampleTableHeader;
  std::vector<SampleRecord> records;
  ASSERT_TRUE(ParseSampleTable(header + "k1\t512\t1000\t00000000000000ff\t3\tjpg\t640\t480\n" +
                                   "k2\t2048\t7\tffffffffffffffff\t-1\tjpeg\t1\t2\n",
                               &records)
                  .ok());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "k1");
  EXPECT_EQ(records[0].offset, 512u);
  EXPECT_EQ(records[0].size, 1000u);
  EXPECT_EQ(records[0].xxh64, 255u);
  EXPECT_EQ(records[0].label, 3);
  EXPECT_EQ(records[0].format, ImageFormat::kJpeg);
  EXPECT_EQ(records[0].width, 640u);
  EXPECT_EQ(records[0].height, 480u);
  EXPECT_EQ(records[1].label, -1);
  EXPECT_EQ(records[1].format, ImageFormat::kJpeg);
  const std::string line = "k1\t512\t1000\t00000000000000ff\t3\tjpg\t640\t480";
  const std::vector<std::string> bad_lines = {line + "\t1\t2\t3", line + "\t1", "k1\t512\t1000",
                                              "k1\t512\t1000\t00000000000000fg\t3\tjpg\t640\t480",
                                              "\t512\t1000\t00000000000000ff\t3\tjpg\t640\t480"};
  for (const std::string& bad : bad_lines) {
    EXPECT_EQ(ParseSampleTable(header + line + "\n" + bad + "\n", &records).message(),
              "sample table line 3 is malformed")
        << bad;
  }
  EXPECT_EQ(ParseSampleTable(header + line, &records).message(), "sample table line 2 is cut short");
}

// The sizes alone (what buckets read of every table at open): each version's, turned for EXIF
// orientations 5 to 8 (those that turn a quarter), and the same refusals and messages as the whole
// parse for the columns read; the columns not read (the checksum here) are not checked.
TEST(ParseShownSizes, ReadsTheSizeAsShownOfEachVersionAndRefusesWhatTheWholeParseRefuses) {
  std::vector<ShownSize> sizes;
  const auto parse = [&](const std::string& text) {
    const Status s = ParseShownSizes(text, &sizes);
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (const ShownSize& z : sizes) pairs.emplace_back(z.width, z.height);
    return std::make_pair(s.message(), pairs);
  };
  using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(parse(std::string(kSampleTableHeader) + "k1\t512\t1000\t00000000000000ff\t3\tjpg\t640\t480\n" +
                  "k2\t2048\t7\tnot-a-checksum\t-1\tjpeg\t1\t2\n"),
            std::make_pair(std::string(), Pairs{{640, 480}, {1, 2}}));
  EXPECT_EQ(parse(std::string(kSampleTableHeaderV2) + "k\t0\t9\t00000000000000ff\t0\tjpeg\t300\t200\t3000\t2000\n"),
            std::make_pair(std::string(), Pairs{{300, 200}}));
  std::string v3 = kSampleTableHeaderV3;
  for (int orientation = 1; orientation <= 8; ++orientation) {
    v3 += "k" + std::to_string(orientation) + "\t0\t9\t00000000000000ff\t0\tjpeg\t400\t200\t0\t0\t" +
          std::to_string(orientation) + "\n";
  }
  EXPECT_EQ(parse(v3),
            std::make_pair(
                std::string(),
                Pairs{{400, 200}, {400, 200}, {400, 200}, {400, 200}, {200, 400}, {200, 400}, {200, 400}, {200, 400}}));
  const std::string line = "k1\t512\t1000\t00000000000000ff\t3\tjpg\t640\t480";
  for (const std::string& bad : {line + "\t1\t2\t3", line + "\t1", std::string("k1\t512\t1000"),
                                 std::string("k1\t512\t1000\t00000000000000ff\t3\tjpg\t640x\t480"),
                                 std::string("k1\t512\t1000\t00000000000000ff\t3\tjpg\t640\t"),
                                 std::string("k1\t512\t1000\t00000000000000ff\t3\tjpg\t-640\t480"),
                                 std::string("k1\t512\t1000\t00000000000000ff\t3\tjpg\t99999999999\t480")}) {
    const std::string table = std::string(kSampleTableHeader) + line + "\n" + bad + "\n";
    EXPECT_EQ(parse(table).first, "sample table line 3 is malformed") << bad;
  }
  const std::string v3_line = "b\t1536\t1536\t0000000000000001\t0\tjpeg\t400\t200\t0\t0\t";
  for (const char* bad : {"0", "9", "x", ""}) {
    EXPECT_EQ(parse(std::string(kSampleTableHeaderV3) + v3_line + bad + "\n").first, "sample table line 2 is malformed")
        << bad;
  }
  EXPECT_EQ(parse(std::string(kSampleTableHeader) + line).first, "sample table line 2 is cut short");
  EXPECT_EQ(parse("k1\t0\n").first, "sample table does not start with the expected header");
}

}  // namespace
// Version 3 (issue 41): a shard with a JPEG its EXIF orientation turns records it, so that a plan by
// shape sees the image as shown; the table takes the lowest version that holds its records.
TEST(ParseSampleTable, VersionThreeRecordsTheOrientationAndTheTableTakesTheLowestVersion) {
  SampleRecord a;
  a.key = "a";
  a.offset = 0;
  a.size = 1536;
  a.xxh64 = 1;
  a.label = 0;
  a.format = ImageFormat::kJpeg;
  a.width = 400;
  a.height = 200;
  SampleRecord b = a;
  b.key = "b";
  b.offset = 1536;
  b.orientation = 6;  // turned a quarter clockwise: shown 200 x 400
  EXPECT_EQ(FormatSampleTable({a}, false),
            std::string(kSampleTableHeader) + "a\t0\t1536\t0000000000000001\t0\tjpeg\t400\t200\n");
  EXPECT_EQ(FormatSampleTable({a}, true),
            std::string(kSampleTableHeaderV2) + "a\t0\t1536\t0000000000000001\t0\tjpeg\t400\t200\t0\t0\n");
  const std::string v3 = FormatSampleTable({a, b}, false);
  EXPECT_EQ(v3, std::string(kSampleTableHeaderV3) + "a\t0\t1536\t0000000000000001\t0\tjpeg\t400\t200\t0\t0\t1\n" +
                    "b\t1536\t1536\t0000000000000001\t0\tjpeg\t400\t200\t0\t0\t6\n");
  std::vector<SampleRecord> records;
  ASSERT_TRUE(ParseSampleTable(v3, &records).ok());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].orientation, 1);
  EXPECT_EQ(records[1].orientation, 6);
  EXPECT_EQ(records[1].shown_width(), 200u);
  EXPECT_EQ(records[1].shown_height(), 400u);
  EXPECT_EQ(records[0].shown_width(), 400u);
  const std::string line = "b\t1536\t1536\t0000000000000001\t0\tjpeg\t400\t200\t0\t0\t";
  for (const char* bad : {"0", "9", "x", ""}) {
    EXPECT_EQ(ParseSampleTable(std::string(kSampleTableHeaderV3) + line + bad + "\n", &records).message(),
              "sample table line 2 is malformed")
        << bad;
  }
}

}  // namespace shardpack
