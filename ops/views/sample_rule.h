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
  // Whether it meets every rule but the count (or a stratified fraction): the samples the count
  // chooses among.
  bool MatchesAllButCount(const SampleRecord& record) const;
  // Whether the rule chooses by thresholds on the key hash (a count, or a stratified fraction),
  // which SetThresholds must then give, one a stratum.
  bool chooses_by_threshold() const { return rule_.count || rule_.stratify; }
  // The strata the thresholds are for: 1, or with stratify the dataset's classes plus one for the
  // samples of no class (stratum 0; class c is stratum c + 1).
  size_t strata() const { return rule_.stratify ? class_count_ + 1 : 1; }
  size_t Stratum(const SampleRecord& record) const;
  // The choice: a sample of stratum s is taken when its key hash (KeyHash) is below below[s].
  void SetThresholds(std::vector<uint64_t> below) { below_ = std::move(below); }
  static uint64_t KeyHash(const std::string& key, uint64_t seed);
  // After every sample was tested: InvalidArgument naming the first key of the keys file that no
  // sample has, and how many such there are (a key list of another dataset is not taken silently).
  Status CheckEveryKeyFound(const std::string& in_shown) const;
  // The rule as the view's manifest records it, e.g. {"classes":["cat"],"fraction":0.05,"seed":7}.
  std::string ToJson() const;

  // Which samples a fraction takes: XXH64 of the key seeded by `seed`, below fraction * 2^64.
  static bool InFraction(const std::string& key, double fraction, uint64_t seed);
  // --fractions f_0, f_1, ...: the cumulative bounds over [0, 2^64), part i taking the hashes in
  // [below[i-1], below[i]) and the last part the rest, so that rounding never leaves a sample out.
  // InvalidArgument for a fraction not in (0, 1), or fractions that do not add up to 1.
  static Status FractionBounds(const std::vector<double>& fractions, std::vector<uint64_t>* below);
  // The part of `key` under those bounds.
  static size_t FractionPart(const std::string& key, const std::vector<uint64_t>& below, uint64_t seed);

 private:
  ViewRule rule_;
  std::vector<bool> labels_;                      // empty: no class rule; else whether label i is taken
  std::unordered_map<std::string, size_t> keys_;  // the keys file's keys, to their line
  std::vector<std::string> key_list_;             // ... in the file's order
  std::unique_ptr<std::atomic<bool>[]> key_found_;
  std::unique_ptr<WhereExpression> where_;  // null: no --where
  size_t class_count_ = 0;
  std::vector<uint64_t> below_;  // by stratum, when chooses_by_threshold()
};

}  // namespace shardpack
