// SampleRule: a ViewRule (shardpack/view.h) made ready to test samples: class names turned into
// labels, the keys file read, the `where` predicate parsed (ops/views/where_expression.h). One rule tests every shard's
// samples from many threads.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ground/sample_table.h"
#include "ops/views/where_expression.h"
#include "shardpack/env.h"
#include "shardpack/status.h"
#include "shardpack/view.h"

namespace shardpack {

class SampleRule {
 public:
  // InvalidArgument naming the flag and the fix: no rule at all, a class the dataset lacks (the
  // classes it has listed), a `where` term that does not parse (the columns listed), a fraction
  // outside [0, 1], an unreadable or empty keys file.
  static Status Make(const ViewRule& rule, const std::vector<std::string>& classes, Env* env,
                     std::unique_ptr<SampleRule>* out);

  // Whether `record` meets every rule. Thread-safe; a key of the keys file is marked as found. With a
  // count, SetCountThreshold must have been called.
  bool Matches(const SampleRecord& record) const;
  // Whether it meets every rule but the count: the samples the count chooses among.
  bool MatchesAllButCount(const SampleRecord& record) const;
  // The count's choice: the samples whose key hash (KeyHash) is below `threshold`.
  void SetCountThreshold(uint64_t threshold) { count_below_ = threshold; }
  static uint64_t KeyHash(const std::string& key, uint64_t seed);
  // After every sample was tested: InvalidArgument naming the first key of the keys file that no
  // sample has, and how many such there are (a key list of another dataset is not taken silently).
  Status CheckEveryKeyFound(const std::string& in_shown) const;
  // The rule as the view's manifest records it, e.g. {"classes":["cat"],"fraction":0.05,"seed":7}.
  std::string ToJson() const;

  // Which samples a fraction takes: XXH64 of the key seeded by `seed`, below fraction * 2^64.
  static bool InFraction(const std::string& key, double fraction, uint64_t seed);

 private:
  ViewRule rule_;
  std::vector<bool> labels_;                      // empty: no class rule; else whether label i is taken
  std::unordered_map<std::string, size_t> keys_;  // the keys file's keys, to their line
  std::vector<std::string> key_list_;             // ... in the file's order
  std::unique_ptr<std::atomic<bool>[]> key_found_;
  std::unique_ptr<WhereExpression> where_;  // null: no --where
  uint64_t count_below_ = 0;
};

}  // namespace shardpack
