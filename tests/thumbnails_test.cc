// ThumbnailPositions: distinct, sorted, within the dataset, a pure function of (samples, count,
// seed); and every sample when the dataset has no more than `count`.
#include "shardpack/thumbnails.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>

#include "shardpack/image.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

TEST(ThumbnailPositionsTest, DistinctSortedAndWithinTheDataset) {
  for (uint64_t samples : {uint64_t(25), uint64_t(1000), uint64_t(1) << 40}) {
    const std::vector<uint64_t> p = ThumbnailPositions(samples, 24, 7);
    ASSERT_EQ(p.size(), 24u);
    EXPECT_EQ(std::set<uint64_t>(p.begin(), p.end()).size(), 24u);
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    EXPECT_LT(p.back(), samples);
    EXPECT_EQ(ThumbnailPositions(samples, 24, 7), p);  // the same seed, the same samples
  }
  EXPECT_NE(ThumbnailPositions(1000, 24, 7), ThumbnailPositions(1000, 24, 8));
}

TEST(ThumbnailPositionsTest, EverySampleOfASmallDataset) {
  std::vector<uint64_t> all(14);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(ThumbnailPositions(14, 24, 0), all);
  EXPECT_TRUE(ThumbnailPositions(0, 24, 0).empty());
  EXPECT_TRUE(ThumbnailPositions(100, 0, 0).empty());
}

// MakeThumbnails over a packed dataset of each format: the samples at ThumbnailPositions, each with
// the size and label its source image had (MakeTree: c<C>/img<K> is (24 + K) x (16 + C), label C,
// in that order), and a 96x96 JPEG.
class MakeThumbnailsTest : public testing::DatasetTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(MakeThumbnailsTest, TheChosenSamplesAsSmallJpegs) {
  MakeTree(2, 5);
  PackOptions o = QuietOptions();
  o.format = testing::FormatNamed(GetParam());
  o.keep_size = std::string(GetParam()) == "raw";  // raw: each image's pixels at its own size
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ThumbnailOptions to;
  to.count = 4;
  to.seed = 3;
  std::vector<Thumbnail> thumbnails;
  const Status s = MakeThumbnails(out(), to, &thumbnails);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<uint64_t> positions = ThumbnailPositions(10, 4, 3);
  ASSERT_EQ(thumbnails.size(), 4u);
  for (size_t i = 0; i < thumbnails.size(); ++i) {
    const Thumbnail& t = thumbnails[i];
    const uint64_t c = positions[i] / 5, k = positions[i] % 5;
    EXPECT_EQ(t.index, positions[i]);
    EXPECT_EQ(t.label, int32_t(c));
    EXPECT_EQ(t.width, 24 + k) << t.key;
    EXPECT_EQ(t.height, 16 + c) << t.key;
    EXPECT_TRUE(t.error.empty()) << t.error;
    DecodedImage decoded;
    ASSERT_TRUE(DecodeImage(t.jpeg, 1 << 20, &decoded).ok()) << t.key;
    EXPECT_EQ(decoded.width, 96u);
    EXPECT_EQ(decoded.height, 96u);
  }
}

// A shard gone: its samples' thumbnails say why they are missing, the others are made.
TEST_F(MakeThumbnailsTest, ASampleThatCannotBeReadIsReportedNotFatal) {
  MakeTree(2, 5);
  PackOptions o = QuietOptions();
  o.samples_per_shard = 5;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ASSERT_EQ(std::remove((out() + "/shard-000001.tar").c_str()), 0);
  ThumbnailOptions to;
  to.count = 10;
  std::vector<Thumbnail> thumbnails;
  const Status s = MakeThumbnails(out(), to, &thumbnails);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(thumbnails.size(), 10u);
  for (const Thumbnail& t : thumbnails) {
    if (t.index < 5) {
      EXPECT_FALSE(t.jpeg.empty()) << t.index;
      EXPECT_EQ(t.error, "") << t.index;
    } else {
      EXPECT_TRUE(t.jpeg.empty()) << t.index;
      EXPECT_EQ(t.error.rfind("not read: ", 0), 0u) << t.error;
      EXPECT_NE(t.error.find("shard-000001.tar"), std::string::npos) << t.error;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, MakeThumbnailsTest, ::testing::Values("wds", "lmdb", "raw"));

}  // namespace
}  // namespace shardpack
