// LogHistogram against bins worked out by hand: 4 bins an octave have the edges 2^(k/4), so 1..64
// fall into bins 0..24 as floor(4 * log2(v)) says (e.g. 3: 4 * 1.585 = 6.34, bin 6).
#include <gtest/gtest.h>

#include <cmath>

#include "shardpack/stat.h"

namespace shardpack {
namespace {

TEST(LogHistogramTest, BinsAreTheFloorOfStepsTimesLog2) {
  LogHistogram h;  // 4 an octave
  for (double v : {3.0, 4.0, 5.0, 64.0, 0.0}) h.Add(v);
  // 3 -> 6 (6.34), 4 -> 8 exactly, 5 -> 9 (9.29), 64 -> 24; 0 is counted apart.
  EXPECT_EQ(h.first, 6);
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(h.zero, 1u);
  EXPECT_DOUBLE_EQ(h.lower_edge(0), std::sqrt(std::sqrt(64.0)));  // 2^(6/4) = 64^(1/4)
  EXPECT_DOUBLE_EQ(h.lower_edge(2), 4.0);
}

TEST(LogHistogramTest, RatiosBelowOneHaveNegativeBins) {
  LogHistogram h(8);
  h.Add(0.5);   // log2 = -1: bin -8
  h.Add(1.0);   // bin 0
  h.Add(0.75);  // 8 * -0.415 = -3.32: bin -4
  EXPECT_EQ(h.first, -8);
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_DOUBLE_EQ(h.lower_edge(0), 0.5);
}

TEST(LogHistogramTest, MergingGivesWhatAddingEverythingToOneGives) {
  LogHistogram low, high, all;
  for (double v : {10.0, 11.0, 0.0}) {
    low.Add(v);
    all.Add(v);
  }
  for (double v : {1000.0, 10.0}) {
    high.Add(v);
    all.Add(v);
  }
  LogHistogram merged;
  merged.Merge(high);  // the wider range first, then one that starts below it
  merged.Merge(low);
  EXPECT_EQ(merged.first, all.first);
  EXPECT_EQ(merged.counts, all.counts);
  EXPECT_EQ(merged.zero, 1u);
  // 10 and 11: floor(4 * 3.32) = 13, floor(4 * 3.46) = 13; 1000: floor(4 * 9.97) = 39.
  EXPECT_EQ(all.first, 13);
  ASSERT_EQ(all.counts.size(), 27u);
  EXPECT_EQ(all.counts[0], 3u);
  EXPECT_EQ(all.counts[26], 1u);
}

}  // namespace
}  // namespace shardpack
