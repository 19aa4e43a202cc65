#include "ops/read/keyed_permutation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <unordered_set>
#include <vector>

namespace shardpack {
namespace {

// Every n from 1 to 3,000, three keys each: the values of positions 0..n-1 are 0..n-1, each once.
TEST(KeyedPermutation, IsAPermutationOfEverySizeUpToThreeThousand) {
  std::vector<uint32_t> seen;
  for (const uint64_t key : {0ull, 1ull, 0xDEADBEEFCAFEull}) {
    for (uint64_t n = 1; n <= 3000; ++n) {
      const KeyedPermutation p(n, key);
      seen.assign(n, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t v = p(i);
        ASSERT_LT(v, n) << "n " << n << " position " << i;
        ++seen[v];
        ASSERT_EQ(p.Inverse(v), i);
      }
      for (uint64_t v = 0; v < n; ++v) ASSERT_EQ(seen[v], 1u) << "n " << n << " value " << v << " key " << key;
    }
  }
}

// At a billion samples (and at the largest size): 200,000 random positions give values in range,
// all different, each mapped back to its position by the inverse. The inverse is a second,
// independent walk through the network: a value reached from two positions could not map back to both.
TEST(KeyedPermutation, IsABijectionAtABillionBySampling) {
  std::mt19937_64 rng(7);
  for (const uint64_t n : {1000000000ull, 1000000007ull, ~0ull}) {
    const KeyedPermutation p(n, 12345);
    std::unordered_set<uint64_t> positions, values;
    for (int k = 0; k < 200000; ++k) {
      const uint64_t i = rng() % n;
      const uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_EQ(p.Inverse(v), i) << "n " << n;
      positions.insert(i);
      values.insert(v);
    }
    EXPECT_EQ(values.size(), positions.size());  // a value repeats only where its position does
  }
}

// Uniform: over 48,000 keys, every (position, value) pair of a permutation of 8 comes up about
// 6,000 times; the bound is 7 standard deviations of a binomial(48000, 1/8).
TEST(KeyedPermutation, EveryValueIsEquallyLikelyAtEveryPosition) {
  const uint64_t n = 8, keys = 48000;
  std::vector<uint64_t> count(n * n, 0);
  for (uint64_t key = 0; key < keys; ++key) {
    const KeyedPermutation p(n, key * 0x9E3779B97F4A7C15ull);
    for (uint64_t i = 0; i < n; ++i) ++count[i * n + p(i)];
  }
  const double expected = double(keys) / n, sigma = std::sqrt(double(keys) * (1.0 / n) * (1 - 1.0 / n));
  for (uint64_t c : count) EXPECT_NEAR(double(c), expected, 7 * sigma);
}

}  // namespace
}  // namespace shardpack
