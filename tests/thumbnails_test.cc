// ThumbnailPositions: distinct, sorted, within the dataset, a pure function of (samples, count,
// seed); and every sample when the dataset has no more than `count`.
#include "shardpack/thumbnails.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

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

}  // namespace
}  // namespace shardpack
