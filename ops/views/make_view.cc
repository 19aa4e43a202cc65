// Subset and Split: the samples of a dataset (or of a view) that meet a rule, written as views
// (docs/views.md). Each base shard's sample table is read on a worker thread, its samples tested,
// and its selection files written; the views' manifests are written last, so a view folder without
// one is a view that was never finished.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "formats/registry/registry.h"
#include "ground/dataset_lock.h"
#include "ground/side_file.h"
#include "ground/units.h"
#include "ground/view_manifest.h"
#include "ops/read/opened_dataset.h"
#include "ops/views/sample_rule.h"
#include "ops/views/shard_tasks.h"
#include "shardpack/view.h"
#include "storage/location.h"

namespace shardpack {
namespace {

// One output view while it is made.
struct ViewOutput {
  std::string dir;
  bool made_dir = false;
  std::unique_ptr<DatasetFolderLock> lock;  // the folder's writer lock (ground/dataset_lock.h), while it is made
  ViewManifest manifest;
  std::vector<ViewShard> shards;  // by input shard (samples 0: none taken)
  std::string side;               // a split's: "matches" or "rest"; empty for a subset
};

// OUT must be a local folder that does not exist or is empty: a view is a few small files beside
// nothing else, and a folder holding a dataset must not be half-replaced. Its writer lock is taken
// before it is found empty, so that two runs making a view in one folder cannot both find it so.
Status PrepareViewFolder(Env* env, const std::string& what, ViewOutput* out) {
  Location location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out->dir, &location));
  if (!location.local() || location.shard_list) {
    return Status::InvalidArgument(location.shown + ": a view is written to a local folder (its base may be a URL)");
  }
  if (!env->FileExists(out->dir)) {
    SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(out->dir));
    out->made_dir = true;
  }
  SHARDPACK_RETURN_IF_ERROR(LockDatasetFolder(env, out->dir, what, &out->lock));
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out->dir, &entries));
  for (const DirEntry& e : entries) {
    if (e.name == kDatasetLockHolderFile) continue;  // this run's own note
    return Status::InvalidArgument(out->dir + " is not empty: a view is written to a new or empty folder");
  }
  return Status::OK();
}

// After a failure: the selection files written, and the folder when this run made it.
void RemoveUnfinishedView(Env* env, ViewOutput& out) {
  for (const ViewShard& s : out.shards) {
    if (s.samples > 0) (void)env->RemoveFile(JoinPath(out.dir, s.selection.file));
  }
  out.lock.reset();  // (its holder note goes with it)
  if (out.made_dir) (void)env->RemoveEmptyDir(out.dir);
}

// How the view's manifest names its base: a URL as it is (credentials taken out), a local folder
// relative to the view, so that the two can move together.
std::string BaseAsNamedFrom(const std::string& view_dir, const Location& base, const std::string& base_dir) {
  if (base.remote()) return base.shown;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path from = fs::weakly_canonical(fs::absolute(view_dir), ec);
  const fs::path to = fs::weakly_canonical(fs::absolute(base_dir), ec);
  const fs::path relative = to.lexically_relative(from);
  return relative.empty() ? to.string() : relative.string();
}

struct Input {
  OpenedDataset dataset;  // a view's: its base
  Location base;          // where the new views' base lies
  std::string shown;
};

Status OpenInput(const std::string& in, const ViewOptions& options, Env* env, Input* input) {
  Location location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(in, &location));
  if (location.shard_list) {
    return Status::InvalidArgument(location.shown +
                                   " is a list of shards: a view is made of a packed dataset (shardpack convert "
                                   "makes one of these shards)");
  }
  input->shown = location.shown;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(location, options.remote, env, &input->dataset, /*check_manifest=*/true));
  return ParseLocation(input->dataset.view != nullptr ? ViewBaseLocation(*input->dataset.view) : in, &input->base);
}

// The sample table of input shard `shard`'s base shard, and its candidates: all the base shard's
// samples, or the input view's selection of them (positions in `records`).
Status ReadCandidates(const Input& input, size_t shard, std::vector<SampleRecord>* records,
                      std::vector<uint32_t>* candidates) {
  const OpenedDataset& d = input.dataset;
  const size_t base_shard = d.view != nullptr ? d.view->manifest.shards[shard].base_shard : shard;
  const ShardEntry& entry = d.manifest.shards[base_shard];
  if (entry.samples > UINT32_MAX) {
    return Status::Unsupported(JoinPath(d.dir, entry.file) +
                               " holds more than 2^32 samples: a view selects by 32-bit positions");
  }
  SHARDPACK_RETURN_IF_ERROR(d.format->ReadSampleRecords(d.env, d.dir, entry, records));
  if (records->size() != entry.samples) {
    return Status::DataLoss(JoinPath(d.dir, entry.file) + ": its sample table lists " +
                            std::to_string(records->size()) + " samples, the manifest " +
                            std::to_string(entry.samples) + "; run shardpack verify");
  }
  if (d.view != nullptr) {
    // A relabelled view's rules (--classes, label in --where) are in its own labels.
    for (SampleRecord& r : *records) r.label = ViewLabel(d.view->manifest, r.label);
    return ReadSelection(d.view->env, d.view->dir, d.view->manifest.shards[shard], entry.samples, candidates);
  }
  candidates->resize(records->size());
  for (uint32_t p = 0; p < candidates->size(); ++p) (*candidates)[p] = p;
  return Status::OK();
}

// Which output a sample goes to (its place in the outputs).
using SideOf = std::function<size_t(const SampleRecord&)>;

// The candidates of input shard `shard`, each sent to the output `side_of` says, as selection files.
Status SelectShard(const Input& input, const SideOf& side_of, Env* env, size_t shard,
                   std::vector<ViewOutput>* outputs) {
  const OpenedDataset& d = input.dataset;
  const size_t base_shard = d.view != nullptr ? d.view->manifest.shards[shard].base_shard : shard;
  std::vector<SampleRecord> records;
  std::vector<uint32_t> candidates;
  SHARDPACK_RETURN_IF_ERROR(ReadCandidates(input, shard, &records, &candidates));
  std::vector<std::vector<uint32_t>> taken(outputs->size());
  for (uint32_t p : candidates) {
    const size_t side = side_of(records[p]);
    if (side < taken.size()) taken[side].push_back(p);  // a subset has no view of the rest
  }
  for (size_t o = 0; o < outputs->size(); ++o) {
    ViewShard& s = (*outputs)[o].shards[shard];
    s.base_shard = base_shard;
    if (taken[o].empty()) continue;
    s.selection.file = SelectionFileName(base_shard);
    SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env, (*outputs)[o].dir, s.selection.file, EncodeSelection(taken[o]),
                                              /*sync=*/true, &s.selection));
    s.samples = taken[o].size();
  }
  return Status::OK();
}

// Runs `task` for each input shard on the operation's threads, with the progress callback; the
// first error (an exception too) is returned.
Status ForEachShard(const Input& input, const ViewOptions& options, const std::function<Status(size_t)>& task) {
  return ForEachShardTask(0, input.dataset.shard_count(), options.threads, "selecting samples", options.on_shard, task);
}

// How many samples each stratum gives (rule.count, or a stratified fraction of them): `total`
// split by the strata's sizes, floors first, then one more to the largest remainders (the
// lower stratum first on a tie), so that they add up to `total` exactly.
std::vector<uint64_t> ShareByLargestRemainder(uint64_t total, const std::vector<uint64_t>& sizes) {
  uint64_t all = 0;
  for (uint64_t n : sizes) all += n;
  std::vector<uint64_t> share(sizes.size(), 0);
  if (all == 0) return share;
  std::vector<std::pair<long double, size_t>> remainders;
  uint64_t given = 0;
  for (size_t s = 0; s < sizes.size(); ++s) {
    const long double exact = static_cast<long double>(total) * sizes[s] / all;
    share[s] = static_cast<uint64_t>(std::floor(exact));
    given += share[s];
    remainders.push_back({exact - share[s], s});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < total && i < remainders.size(); ++i, ++given) ++share[remainders[i].second];
  return share;
}

// The key-hash thresholds of a rule that chooses by them (SampleRule::chooses_by_threshold): the
// hash below which exactly the wanted number of each stratum's samples (of those that meet the
// other rules) lie. Each shard keeps its lowest hashes of each stratum, then the lowest of all:
// 8 bytes a kept hash. A stratified rule first counts each stratum's samples.
Status FindThresholds(const Input& input, const ViewOptions& options, SampleRule* rule) {
  const size_t strata = rule->strata();
  const size_t shards = input.dataset.shard_count();
  std::vector<uint64_t> wanted(strata, options.rule.count.value_or(0));
  if (options.rule.stratify) {
    std::vector<std::vector<uint64_t>> sizes(shards, std::vector<uint64_t>(strata, 0));
    SHARDPACK_RETURN_IF_ERROR(ForEachShard(input, options, [&](size_t shard) {
      std::vector<SampleRecord> records;
      std::vector<uint32_t> candidates;
      SHARDPACK_RETURN_IF_ERROR(ReadCandidates(input, shard, &records, &candidates));
      for (uint32_t p : candidates) {
        if (rule->MatchesAllButCount(records[p])) ++sizes[shard][rule->Stratum(records[p])];
      }
      return Status::OK();
    }));
    std::vector<uint64_t> size(strata, 0);
    uint64_t all = 0;
    for (const auto& per_shard : sizes) {
      for (size_t s = 0; s < strata; ++s) size[s] += per_shard[s], all += per_shard[s];
    }
    const uint64_t total =
        options.rule.count
            ? *options.rule.count
            : static_cast<uint64_t>(std::llround(static_cast<long double>(*options.rule.fraction) * all));
    if (total > all) {
      return Status::InvalidArgument("--count " + std::to_string(total) + ": only " + std::to_string(all) +
                                     " samples of " + input.shown + " meet the other rules; give at most " +
                                     std::to_string(all));
    }
    wanted = ShareByLargestRemainder(total, size);
  }
  // lowest[shard][stratum]: the shard's lowest hashes of the stratum, at most wanted[stratum].
  std::vector<std::vector<std::vector<uint64_t>>> lowest(shards);
  SHARDPACK_RETURN_IF_ERROR(ForEachShard(input, options, [&](size_t shard) {
    std::vector<SampleRecord> records;
    std::vector<uint32_t> candidates;
    SHARDPACK_RETURN_IF_ERROR(ReadCandidates(input, shard, &records, &candidates));
    std::vector<std::vector<uint64_t>>& h = lowest[shard];
    h.resize(strata);
    for (uint32_t p : candidates) {
      if (rule->MatchesAllButCount(records[p])) {
        h[rule->Stratum(records[p])].push_back(SampleRule::KeyHash(records[p].key, options.rule.seed));
      }
    }
    for (size_t s = 0; s < strata; ++s) {
      if (h[s].size() > wanted[s]) {
        std::nth_element(h[s].begin(), h[s].begin() + long(wanted[s]), h[s].end());
        h[s].resize(wanted[s]);
      }
    }
    return Status::OK();
  }));
  std::vector<uint64_t> below(strata, 0);
  for (size_t s = 0; s < strata; ++s) {
    if (wanted[s] == 0) continue;  // none of this stratum: every hash is at or above 0
    std::vector<uint64_t> all;
    for (const auto& per_shard : lowest) all.insert(all.end(), per_shard[s].begin(), per_shard[s].end());
    if (all.size() < wanted[s]) {  // (a stratified share never is: it is at most the stratum's size)
      return Status::InvalidArgument("--count " + std::to_string(wanted[s]) + ": only " + std::to_string(all.size()) +
                                     " samples of " + input.shown + " meet the other rules; give at most " +
                                     std::to_string(all.size()));
    }
    std::nth_element(all.begin(), all.begin() + long(wanted[s] - 1), all.end());
    const uint64_t last = all[wanted[s] - 1];
    // Two keys of one hash at the boundary would make the count one off: 2^-64 a pair, said if met.
    if (std::count(all.begin(), all.end(), last) > 1) {
      return Status::InvalidArgument("--count " + std::to_string(wanted[s]) +
                                     ": two keys hash alike at the boundary; give another --seed");
    }
    if (last == UINT64_MAX) return Status::InvalidArgument("--count: a key hashes to 2^64 - 1; give another --seed");
    below[s] = last + 1;
  }
  rule->SetThresholds(std::move(below));
  return Status::OK();
}

// The rule output `o` records: the rule, or a fractions split's part, with the side of a split and
// the rule of the view it was made of.
nlohmann::json RecordedRule(const OpenedDataset& d, const SampleRule& rule,
                            const std::vector<nlohmann::json>& side_rules, const ViewOutput& out, size_t o) {
  nlohmann::json r = o < side_rules.size() ? side_rules[o] : nlohmann::json::parse(rule.ToJson());
  if (!out.side.empty()) r["split"] = out.side;
  if (d.view != nullptr) r["of_view"] = nlohmann::json::parse(d.view->manifest.rule_json);
  return r;
}

// --update: every output folder holds a view made of the input's base by this rule (RefreshView
// each), or none holds anything (*make: make them). A folder of another view, or of a dataset, is
// refused.
Status UpdateViews(const Input& input, const SampleRule& rule, const std::vector<nlohmann::json>& side_rules,
                   const ViewOptions& options, Env* env, std::vector<ViewOutput>* outputs,
                   const std::vector<ViewResult*>& results, bool* make) {
  namespace fs = std::filesystem;
  size_t views = 0;
  for (const ViewOutput& out : *outputs) views += env->FileExists(JoinPath(out.dir, kManifestFileName)) ? 1 : 0;
  *make = views == 0;
  if (views == 0) return Status::OK();
  std::error_code ec;
  const auto same_place = [&](const std::string& a, const std::string& b) {
    return fs::weakly_canonical(fs::absolute(a), ec) == fs::weakly_canonical(fs::absolute(b), ec);
  };
  for (size_t o = 0; o < outputs->size(); ++o) {
    const ViewOutput& out = (*outputs)[o];
    Manifest dataset;
    ViewManifest view;
    bool is_view = false;
    if (!env->FileExists(JoinPath(out.dir, kManifestFileName))) {
      return Status::InvalidArgument("--update: " + out.dir +
                                     " holds no view while the others do: give the folders "
                                     "of the views this command made");
    }
    SHARDPACK_RETURN_IF_ERROR(ReadManifestOrView(env, out.dir, true, &dataset, &view, &is_view));
    if (!is_view) return Status::InvalidArgument("--update: " + out.dir + " holds a dataset, not a view");
    Location base;
    SHARDPACK_RETURN_IF_ERROR(ParseLocation(LocationFrom(out.dir, view.base), &base));
    const bool same_base =
        base.remote() || input.base.remote() ? base.shown == input.base.shown : same_place(base.text, input.base.text);
    const nlohmann::json wanted = RecordedRule(input.dataset, rule, side_rules, out, o);
    if (!same_base || nlohmann::json::parse(view.rule_json) != wanted) {
      const std::string shown = base.local() ? fs::path(base.shown).lexically_normal().string() : base.shown;
      return Status::InvalidArgument("--update: " + out.dir +
                                     " is a view made by another command: " + RemakeViewCommand(view, shown) +
                                     "; --update takes the command that made it (or give a new folder)");
    }
  }
  for (size_t o = 0; o < outputs->size(); ++o) {
    RefreshResult refreshed;
    SHARDPACK_RETURN_IF_ERROR(RefreshView((*outputs)[o].dir, options, &refreshed));
    ViewResult* result = results[o];
    result->out = (*outputs)[o].dir;
    result->samples = refreshed.samples;
    result->shards = refreshed.shards;
    result->base_samples = input.dataset.samples();
    result->added = refreshed.added;
    result->updated = true;
  }
  return Status::OK();
}

Status MakeViews(const std::string& in, std::vector<ViewOutput>* outputs, const ViewOptions& options,
                 std::vector<ViewResult*> results, SideOf side_of = nullptr,
                 const std::vector<nlohmann::json>& side_rules = {}) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  Input input;
  SHARDPACK_RETURN_IF_ERROR(OpenInput(in, options, env, &input));
  const OpenedDataset& d = input.dataset;
  std::unique_ptr<SampleRule> rule;
  SHARDPACK_RETURN_IF_ERROR(SampleRule::Make(options.rule, d.classes(), env, &rule));
  if (options.rule.relabel && (options.rule.classes.empty() || outputs->size() != 1)) {
    return Status::InvalidArgument(
        "--relabel labels a subset's classes 0..N-1: give it to subset, with --classes (a split's other side "
        "would hold classes it does not list)");
  }
  // The new views' classes: the input's (a relabelled view's own), or with --relabel those given,
  // in the input's order; base_labels: each one's label in the base.
  std::vector<std::string> view_classes;
  std::vector<int32_t> base_labels;
  const auto base_label_of = [&](size_t label) {
    return d.view != nullptr && !d.view->manifest.base_labels.empty() ? d.view->manifest.base_labels[label]
                                                                      : int32_t(label);
  };
  for (size_t label = 0; label < d.classes().size(); ++label) {
    const std::vector<std::string>& given = options.rule.classes;
    const bool taken = options.rule.relabel ? std::find(given.begin(), given.end(), d.classes()[label]) != given.end()
                                            : d.view != nullptr && !d.view->manifest.base_labels.empty();
    if (!taken) continue;
    view_classes.push_back(d.classes()[label]);
    base_labels.push_back(base_label_of(label));
  }
  if (options.update) {
    bool make = false;
    SHARDPACK_RETURN_IF_ERROR(UpdateViews(input, *rule, side_rules, options, env, outputs, results, &make));
    if (!make) return Status::OK();
  }
  for (ViewOutput& out : *outputs) {
    const Status s = PrepareViewFolder(env, (outputs->size() > 1 ? "a split of " : "a subset of ") + in, &out);
    if (!s.ok()) {
      for (ViewOutput& made : *outputs) RemoveUnfinishedView(env, made);
      return s;
    }
    out.shards.resize(d.shard_count());
  }
  if (rule->chooses_by_threshold()) {
    const Status s = FindThresholds(input, options, rule.get());
    if (!s.ok()) {
      for (ViewOutput& made : *outputs) RemoveUnfinishedView(env, made);
      return s;
    }
  }
  if (side_of == nullptr) side_of = [&rule](const SampleRecord& r) -> size_t { return rule->Matches(r) ? 0 : 1; };
  Status failed =
      ForEachShard(input, options, [&](size_t shard) { return SelectShard(input, side_of, env, shard, outputs); });
  if (failed.ok()) failed = rule->CheckEveryKeyFound(input.shown);
  // An empty view could only fail later, in whatever reads it: refused here, naming the side.
  for (size_t o = 0; o < outputs->size() && failed.ok(); ++o) {
    const ViewOutput& out = (*outputs)[o];
    if (std::none_of(out.shards.begin(), out.shards.end(), [](const ViewShard& s) { return s.samples > 0; })) {
      const std::string why = !side_rules.empty()
                                  ? "no sample of " + input.shown + " hashes into its share " + side_rules[o].dump() +
                                        " (too few samples for so small a fraction)"
                              : o == 0 ? "no sample of " + input.shown + " meets the rules " + rule->ToJson()
                                       : "every sample of " + input.shown + " meets the rules " + rule->ToJson();
      failed = Status::InvalidArgument(why + ": " + out.dir + " would be an empty view; nothing was written");
    }
  }
  for (size_t o = 0; o < outputs->size() && failed.ok(); ++o) {
    ViewOutput& out = (*outputs)[o];
    ViewManifest& m = out.manifest;
    m.name = std::filesystem::path(out.dir).lexically_normal().filename().string();
    if (m.name.empty()) m.name = std::filesystem::path(out.dir).lexically_normal().parent_path().filename().string();
    m.tool_version = SHARDPACK_VERSION;
    m.base = BaseAsNamedFrom(out.dir, input.base, d.dir);
    RecordViewBase(d.manifest, &m);
    m.rule_json = RecordedRule(d, *rule, side_rules, out, o).dump();
    m.classes = view_classes;
    m.base_labels = base_labels;
    for (const ViewShard& s : out.shards) {
      if (s.samples == 0) continue;
      m.shards.push_back(s);
      m.samples += s.samples;
    }
    failed = WriteViewManifest(env, out.dir, m);
    ViewResult* result = results[o];
    result->out = out.dir;
    result->samples = m.samples;
    result->shards = m.shards.size();
    result->base_samples = d.samples();
    if (options.rule.relabel) result->classes = view_classes;
  }
  if (!failed.ok()) {
    // Manifests first: a view folder with one is a finished view.
    for (ViewOutput& out : *outputs) (void)env->RemoveFile(JoinPath(out.dir, kManifestFileName));
    for (ViewOutput& out : *outputs) RemoveUnfinishedView(env, out);
  }
  return failed;
}

}  // namespace

Status Subset(const std::string& in, const std::string& out, const ViewOptions& options, ViewResult* result) {
  *result = ViewResult();
  std::vector<ViewOutput> outputs(1);
  outputs[0].dir = out;
  return MakeViews(in, &outputs, options, {result});
}

Status Split(const std::string& in, const std::string& out_a, const std::string& out_b, const ViewOptions& options,
             ViewResult* a, ViewResult* b) {
  *a = ViewResult();
  *b = ViewResult();
  if (std::filesystem::path(out_a).lexically_normal() == std::filesystem::path(out_b).lexically_normal()) {
    return Status::InvalidArgument("split writes two views: give two folders (both are " + out_a + ")");
  }
  std::vector<ViewOutput> outputs(2);
  outputs[0].dir = out_a;
  outputs[0].side = "matches";
  outputs[1].dir = out_b;
  outputs[1].side = "rest";
  return MakeViews(in, &outputs, options, {a, b});
}

Status SplitByFractions(const std::string& in, const std::vector<std::string>& outs,
                        const std::vector<double>& fractions, const ViewOptions& options,
                        std::vector<ViewResult>* results) {
  results->assign(outs.size(), ViewResult());
  if (outs.size() < 2 || fractions.size() != outs.size()) {
    return Status::InvalidArgument("--fractions gives " + std::to_string(fractions.size()) + " fractions for " +
                                   std::to_string(outs.size()) + " folders: give one folder a fraction, at least two");
  }
  const ViewRule& r = options.rule;
  if (!r.classes.empty() || !r.keys_file.empty() || !r.where.empty() || r.fraction || r.count) {
    return Status::InvalidArgument(
        "--fractions splits every sample by its key's hash and takes no other rule: make a subset with the "
        "rules first, then split it");
  }
  std::set<std::string> seen;
  for (const std::string& o : outs) {
    if (!seen.insert(std::filesystem::path(o).lexically_normal().string()).second) {
      return Status::InvalidArgument("--fractions writes one view a fraction: give distinct folders (" + o +
                                     " is given twice)");
    }
  }
  std::vector<uint64_t> below;
  SHARDPACK_RETURN_IF_ERROR(SampleRule::FractionBounds(fractions, &below));
  const uint64_t seed = r.seed;
  SideOf side_of = [below, seed](const SampleRecord& record) {
    return SampleRule::FractionPart(record.key, below, seed);
  };
  std::vector<ViewOutput> outputs(outs.size());
  std::vector<ViewResult*> pointers;
  std::vector<nlohmann::json> side_rules;
  for (size_t i = 0; i < outs.size(); ++i) {
    outputs[i].dir = outs[i];
    pointers.push_back(&(*results)[i]);
    side_rules.push_back({{"fractions", fractions}, {"seed", seed}, {"part", i}});
  }
  // A --where that no sample meets would refuse an empty view as for any split: the same here, with
  // a fraction too small for the dataset.
  ViewOptions any = options;
  any.rule.fraction = 1.0;  // a rule the maker requires; every sample meets it
  return MakeViews(in, &outputs, any, pointers, side_of, side_rules);
}

}  // namespace shardpack
