#include "formats/wds/dali_index.h"

#include <gtest/gtest.h>

namespace shardpack {
namespace {

TEST(DaliIndex, WritesWds2idxFormat) {
  DaliIndexBuilder b;
  b.AddSample({{"cls", 512, 1, "000000000.cls"}, {"jpg", 1536, 73692, "000000000.jpg"}});
  b.AddSample({{"json", 76800, 12, "000000001.json"}});
  EXPECT_EQ(b.Contents(),
            "v1.2 2\n"
            "cls 512 1 000000000.cls jpg 1536 73692 000000000.jpg\n"
            "json 76800 12 000000001.json\n");
}

TEST(DaliIndex, ParsesWhatItWrites) {
  DaliIndexBuilder b;
  b.AddSample({{"cls", 512, 1, "k.cls"}, {"png", 1536, 99, "k.png"}});
  std::vector<DaliIndexSample> samples;
  ASSERT_TRUE(ParseDaliIndex(b.Contents(), &samples).ok());
  ASSERT_EQ(samples.size(), 1u);
  ASSERT_EQ(samples[0].size(), 2u);
  EXPECT_EQ(samples[0][1].ext, "png");
  EXPECT_EQ(samples[0][1].offset, 1536u);
  EXPECT_EQ(samples[0][1].size, 99u);
  EXPECT_EQ(samples[0][1].name, "k.png");
}

TEST(DaliIndex, RejectsCountMismatchAndBadLines) {
  std::vector<DaliIndexSample> samples;
  EXPECT_EQ(ParseDaliIndex("v1.2 2\ncls 512 1 k.cls\n", &samples).message(),
            "DALI index line 1: header says 2 samples, file lists 1");
  EXPECT_EQ(ParseDaliIndex("v1.2 1\ncls 512 k.cls\n", &samples).message(),
            "DALI index line 2: incomplete member entry");
  EXPECT_EQ(ParseDaliIndex("v1.1 1\n", &samples).message(), "DALI index line 1: expected 'v1.2 <samples>'");
}

}  // namespace
}  // namespace shardpack
