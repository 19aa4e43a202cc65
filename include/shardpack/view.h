// Views: a dataset made of some of another's samples, without a copy of any of them
// (`shardpack subset`, `shardpack split`; docs/views.md). A view is a small folder: a manifest that
// names its base dataset (a relative path or a URL) and the base manifest's checksum, and a
// selection file for each base shard it takes samples from. Every reader reads it as a dataset.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// Which samples a view takes: those that meet every rule given (at least one).
struct ViewRule {
  std::vector<std::string> classes;  // class names of the dataset
  std::string keys_file;             // a file of keys, one a line (every one must be in the dataset)
  // A predicate over the sample table's columns: terms "COLUMN OP VALUE" joined by "and" and "or"
  // ("and" binds tighter) and grouped by parentheses, COLUMN one of size, width, height,
  // original_width, original_height, label, orientation (OP <, <=, >, >=, ==, !=; VALUE an
  // integer), aspect (width over height as shown; a decimal), or format (== or !=; jpeg, png, ...).
  // E.g. "(width >= 512 or height >= 512) and format == jpeg" (ops/views/where_expression.h).
  std::string where;
  // The samples whose key hashes below `fraction` (XXH64 of the key, seeded by `seed`, divided by
  // 2^64): a sample's side depends on its key alone, so an append never moves one.
  std::optional<double> fraction;
  // Exactly this many samples, of those that meet the other rules: the `count` whose keys hash
  // lowest (XXH64 seeded by `seed`), as HF's train_test_split(test_size=N) takes a number. The same
  // samples every time; after an append some may differ (a new key can hash lower), where a
  // fraction never moves one. Refused when fewer samples meet the other rules.
  std::optional<uint64_t> count;
  uint64_t seed = 0;
};

struct ViewOptions {
  ViewRule rule;
  int threads = 0;  // 0: every core
  Env* env = nullptr;
  RemoteOptions remote;  // a base at a URL
  std::function<void(uint64_t shards_done, uint64_t shards)> on_shard;
};

struct ViewResult {
  std::string out;
  uint64_t samples = 0;       // selected
  uint64_t shards = 0;        // base shards it takes samples from
  uint64_t base_samples = 0;  // in the input (a view: its selection)
};

// Writes a view of `in` (a dataset, or a view: the new view then names that view's base) into
// `out`, which must not exist or be empty: the samples that meet options.rule.
Status Subset(const std::string& in, const std::string& out, const ViewOptions& options, ViewResult* result);
// Writes two views of `in`: `out_a` the samples that meet options.rule, `out_b` every other one.
// Disjoint, and together every sample of `in`, in its order.
Status Split(const std::string& in, const std::string& out_a, const std::string& out_b, const ViewOptions& options,
             ViewResult* a, ViewResult* b);
// Writes outs.size() views of `in` (2 or more; e.g. train, val, test), sample by sample by the hash
// of its key (XXH64 seeded by options.rule.seed, over 2^64): view i takes those in
// [f_0 + ... + f_(i-1), f_0 + ... + f_i). `fractions` (each above 0) must add up to 1. Disjoint,
// together every sample of `in`; as for a fraction, an append never moves a sample, and the first
// view equals a two-way split's --fraction f_0. No other rule is taken.
Status SplitByFractions(const std::string& in, const std::vector<std::string>& outs,
                        const std::vector<double>& fractions, const ViewOptions& options,
                        std::vector<ViewResult>* results);

}  // namespace shardpack
