#include "ops/inspect/value_counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace shardpack {
namespace {

// The reference: nearest rank over the sorted values, as stat computed it from an array.
uint64_t NearestRank(const std::vector<uint64_t>& sorted, double q) {
  size_t r = static_cast<size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
  return sorted[std::min(sorted.size() - 1, r == 0 ? 0 : r - 1)];
}

TEST(ValueCounts, ExactWhileTheDistinctValuesFit) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> values;
  ValueCounts counts;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = rng() % 5000 + (i % 7 == 0 ? 1000000 : 0);
    values.push_back(v);
    counts.Add(v);
  }
  std::sort(values.begin(), values.end());
  const DatasetStats::Percentiles p = counts.Summary();
  EXPECT_TRUE(counts.exact());
  EXPECT_EQ(p.min, values.front());
  EXPECT_EQ(p.max, values.back());
  EXPECT_EQ(p.p50, NearestRank(values, 0.50));
  EXPECT_EQ(p.p90, NearestRank(values, 0.90));
  EXPECT_EQ(p.p99, NearestRank(values, 0.99));
  long double sum = 0;
  for (const uint64_t v : values) sum += v;
  EXPECT_DOUBLE_EQ(p.mean, double(sum / values.size()));
}

// Three million distinct sizes: bucketed, each percentile at most 0.1% below the exact one and
// never above it; min, max, mean exact.
TEST(ValueCounts, PastAMillionDistinctValuesWithinAThousandthBelow) {
  std::mt19937_64 rng(9);
  std::vector<uint64_t> values;
  ValueCounts counts;
  for (int i = 0; i < 3000000; ++i) {
    const uint64_t v = 1000 + rng() % 50000000;
    values.push_back(v);
    counts.Add(v);
  }
  std::sort(values.begin(), values.end());
  const DatasetStats::Percentiles p = counts.Summary();
  EXPECT_FALSE(counts.exact());
  EXPECT_EQ(p.min, values.front());
  EXPECT_EQ(p.max, values.back());
  for (const auto& [got, q] : {std::pair{p.p50, 0.50}, {p.p90, 0.90}, {p.p99, 0.99}}) {
    const uint64_t exact = NearestRank(values, q);
    EXPECT_LE(got, exact) << q;
    EXPECT_GE(double(got), double(exact) * (1 - 1.0 / 1024)) << q;
  }
  long double sum = 0;
  for (const uint64_t v : values) sum += v;
  EXPECT_NEAR(p.mean, double(sum / values.size()), 1e-6 * p.mean);
}

// Merged in groups (as stat merges its shards), the summary equals one of every value added one by
// one, which the tests above hold to a sort: exact, and past kMaxExact distinct values in the union
// although no group has that many, and with a group bucketed on its own.
TEST(ValueCounts, MergedGroupsSummariseAsOne) {
  std::mt19937_64 rng(11);
  for (const uint64_t range : {uint64_t(4000), uint64_t(50000000)}) {
    ValueCounts one, merged;
    for (const size_t group : {size_t(300000), size_t(0), size_t(700000), size_t(1200000), size_t(500000)}) {
      ValueCounts part;
      for (size_t i = 0; i < group; ++i) {
        const uint64_t v = 100 + rng() % range;
        one.Add(v);
        part.Add(v);
      }
      merged.Merge(part);
    }
    const DatasetStats::Percentiles a = one.Summary(), b = merged.Summary();
    EXPECT_EQ(merged.exact(), one.exact()) << range;
    EXPECT_EQ(one.exact(), range == 4000) << range;  // 2.7M draws of 50M values: past 2^20 distinct
    EXPECT_TRUE(b == a) << range << ": p50 " << b.p50 << " against " << a.p50 << ", mean " << b.mean << " against "
                        << a.mean;
  }
}

}  // namespace
}  // namespace shardpack
