#include "ops/inspect/value_counts.h"

#include <algorithm>

namespace shardpack {

uint64_t ValueCounts::BucketOf(uint64_t value) {
  if (value < 2048) return value;
  // Keep the 11 leading bits (the leading one and 10 after it): 1,024 buckets per power of two.
  int bits = 0;
  while ((value >> bits) >= 2048) ++bits;
  return (value >> bits) << bits;
}

void ValueCounts::Add(uint64_t value) {
  min_ = n_ == 0 ? value : std::min(min_, value);
  max_ = n_ == 0 ? value : std::max(max_, value);
  ++n_;
  sum_ += static_cast<long double>(value);
  ++counts_[bucketed_ ? BucketOf(value) : value];
  if (!bucketed_ && counts_.size() > kMaxExact) Bucket();
}

void ValueCounts::Bucket() {
  std::map<uint64_t, uint64_t> buckets;
  for (const auto& [v, count] : counts_) buckets[BucketOf(v)] += count;
  counts_ = std::move(buckets);
  bucketed_ = true;
}

void ValueCounts::Merge(const ValueCounts& other) {
  if (other.n_ == 0) return;
  min_ = n_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = n_ == 0 ? other.max_ : std::max(max_, other.max_);
  n_ += other.n_;
  sum_ += other.sum_;  // (sums of integers below 2^64: exact in a long double's 64-bit mantissa)
  // Added one by one, the values would have been bucketed once more than kMaxExact distinct ones
  // had come, and stayed so: the same as bucketing when the union has that many, or when either
  // side was bucketed already (its values were more than kMaxExact distinct).
  if (other.bucketed_ && !bucketed_) Bucket();
  for (const auto& [v, count] : other.counts_) counts_[bucketed_ ? BucketOf(v) : v] += count;
  if (!bucketed_ && counts_.size() > kMaxExact) Bucket();
}

DatasetStats::Percentiles ValueCounts::Summary() const {
  DatasetStats::Percentiles p;
  if (n_ == 0) return p;
  p.min = min_;
  p.max = max_;
  p.mean = static_cast<double>(sum_ / static_cast<long double>(n_));
  // Nearest rank: the value at position ceil(q x n) (1-based) of the sorted values.
  const auto at_rank = [&](double q) {
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(n_) + 0.999999);
    rank = std::min(n_, std::max<uint64_t>(rank, 1));
    uint64_t seen = 0;
    for (const auto& [value, count] : counts_) {
      seen += count;
      if (seen >= rank) return std::max(value, min_);
    }
    return max_;
  };
  p.p50 = at_rank(0.50);
  p.p90 = at_rank(0.90);
  p.p99 = at_rank(0.99);
  return p;
}

}  // namespace shardpack
