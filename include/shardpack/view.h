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
  // With `fraction` or `count`: the same share of every class (sklearn's and HF's stratify), each
  // class's share of the samples that meet the other rules, by the lowest key hashes within it, with
  // the count split over the classes by largest remainder (samples without a class are one more
  // stratum). Like `count`, an append may change some.
  bool stratify = false;
  // With `classes`, for a subset: the view's classes are those given, labelled 0..N-1 in the base's
  // order, the mapping recorded in its manifest (a 10-way classifier from a 1,000-class dataset).
  bool relabel = false;
};

struct ViewOptions {
  ViewRule rule;
  int threads = 0;  // 0: every core
  Env* env = nullptr;
  RemoteOptions remote;  // a base at a URL
  std::function<void(uint64_t shards_done, uint64_t shards)> on_shard;
  // Subset and split into folders that hold the views this rule made of `in` already: bring them
  // to its latest generation (RefreshView) rather than refuse a folder that is not empty. Folders
  // that are all empty get the views made; a view made with another rule is refused.
  bool update = false;
};

struct ViewResult {
  std::string out;
  uint64_t samples = 0;              // selected
  uint64_t shards = 0;               // base shards it takes samples from
  uint64_t base_samples = 0;         // in the input (a view: its selection)
  std::vector<std::string> classes;  // a relabelled view's classes: label i is classes[i]
  bool updated = false;              // options.update found the view made: refreshed (RefreshView)
  uint64_t added = 0;                // ... taking these samples of the appended ones
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

// What RefreshView did.
struct RefreshResult {
  std::string view;
  uint64_t appended = 0;    // samples appends added to the base since the view last read it
  uint64_t added = 0;       // ... of which its rule takes (now in the view)
  uint64_t samples = 0;     // the view's, after
  uint64_t shards = 0;      // base shards it takes samples from, after
  uint64_t generation = 0;  // the base generation it reads now
};

// Brings view `view` (a local folder) to its base's latest generation: the samples that appends
// added since it was made (or last refreshed) and that its recorded rule takes join it; none of its
// samples changes, so the sides of a split stay disjoint and together the base. Nothing to do (OK,
// appended 0) when the base has not grown. Refused, naming the command that makes the view again,
// for a rule an append can change (count, stratify) and for a base that changed otherwise.
// options.rule is not read (the view's own rule is); threads, env, remote and on_shard are.
Status RefreshView(const std::string& view, const ViewOptions& options, RefreshResult* result);

}  // namespace shardpack
