// ValueCounts: the percentiles of a column (sample sizes, widths, heights) in memory bounded by the
// number of distinct values, not the number of samples, so that `stat` over a billion samples
// holds no array of them (issue 39).
//
// Exact while at most kMaxExact distinct values have come (widths and heights always: an image
// side has fewer; sample sizes of datasets of up to about a million samples): nearest-rank
// percentiles, min, max and the mean are then what a sort of every value gives. Past it, the values
// are kept in logarithmic buckets of 1/1024 of a power of two each: a percentile is then its
// bucket's lower bound, within 0.1% below the exact value; min, max and the mean stay exact.
#pragma once

#include <cstdint>
#include <map>

#include "shardpack/stat.h"

namespace shardpack {

class ValueCounts {
 public:
  static constexpr size_t kMaxExact = size_t(1) << 20;

  void Add(uint64_t value);
  // Adds every value `other` was given, as if Add had been called with each: the counts, min, max
  // and sum are the same, and so the summary, whatever the grouping (stat counts each shard apart
  // on its own thread, then merges them in shard order).
  void Merge(const ValueCounts& other);
  // Nearest-rank p50, p90, p99, with min, max and mean; all zero when nothing was added.
  DatasetStats::Percentiles Summary() const;
  bool exact() const { return !bucketed_; }

 private:
  // The bucket that holds `value`: values below 2048 are their own.
  static uint64_t BucketOf(uint64_t value);
  // From exact values to their buckets, for good (past kMaxExact distinct values).
  void Bucket();

  std::map<uint64_t, uint64_t> counts_;  // value (or bucket's lower bound) -> samples
  bool bucketed_ = false;
  uint64_t n_ = 0, min_ = 0, max_ = 0;
  long double sum_ = 0;
};

}  // namespace shardpack
