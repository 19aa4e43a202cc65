// Subset and Split: the samples of a dataset (or of a view) that meet a rule, written as views
// (docs/views.md). Each base shard's sample table is read on a worker thread, its samples tested,
// and its selection files written; the views' manifests are written last, so a view folder without
// one is a view that was never finished.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "formats/registry/registry.h"
#include "ground/dataset_lock.h"
#include "ground/side_file.h"
#include "ground/status_of_call.h"
#include "ground/units.h"
#include "ground/view_manifest.h"
#include "ground/worker_threads.h"
#include "ops/read/opened_dataset.h"
#include "ops/views/sample_rule.h"
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

// Runs `task` for each input shard on the arena's threads, with the progress callback; the first
// error (an exception too) is returned.
Status ForEachShard(const Input& input, const ViewOptions& options, const std::function<Status(size_t)>& task) {
  const size_t shards = input.dataset.shard_count();
  std::vector<Status> statuses(shards);
  std::mutex progress_mu;
  uint64_t done = 0;
  try {
    tbb::task_arena arena(WorkerThreads(options.threads));
    arena.execute([&] {
      tbb::parallel_for(size_t(0), shards, [&](size_t shard) {
        statuses[shard] = StatusOfCall("selecting samples", [&] { return task(shard); });
        if (options.on_shard) {
          std::lock_guard<std::mutex> lock(progress_mu);
          options.on_shard(++done, shards);
        }
      });
    });
  } catch (const std::exception& e) {
    return Status::IOError(std::string("selecting samples failed: ") + e.what());
  }
  for (const Status& s : statuses) SHARDPACK_RETURN_IF_ERROR(s);
  return Status::OK();
}

// rule.count: the hash below which exactly `count` of the samples that meet the other rules lie
// (each shard keeps its lowest `count` hashes, then the lowest of all: 8 bytes a kept hash).
Status FindCountThreshold(const Input& input, const ViewOptions& options, SampleRule* rule) {
  const uint64_t count = *options.rule.count;
  std::vector<std::vector<uint64_t>> lowest(input.dataset.shard_count());
  SHARDPACK_RETURN_IF_ERROR(ForEachShard(input, options, [&](size_t shard) {
    std::vector<SampleRecord> records;
    std::vector<uint32_t> candidates;
    SHARDPACK_RETURN_IF_ERROR(ReadCandidates(input, shard, &records, &candidates));
    std::vector<uint64_t>& h = lowest[shard];
    for (uint32_t p : candidates) {
      if (rule->MatchesAllButCount(records[p])) h.push_back(SampleRule::KeyHash(records[p].key, options.rule.seed));
    }
    if (h.size() > count) {
      std::nth_element(h.begin(), h.begin() + long(count), h.end());
      h.resize(count);
    }
    return Status::OK();
  }));
  std::vector<uint64_t> all;
  for (const std::vector<uint64_t>& h : lowest) all.insert(all.end(), h.begin(), h.end());
  if (all.size() < count) {
    return Status::InvalidArgument("--count " + std::to_string(count) + ": only " + std::to_string(all.size()) +
                                   " samples of " + input.shown + " meet the other rules; give at most " +
                                   std::to_string(all.size()));
  }
  std::nth_element(all.begin(), all.begin() + long(count - 1), all.end());
  const uint64_t last = all[count - 1];
  // Two keys of one hash at the boundary would make the count one off: 2^-64 a pair, said if met.
  if (std::count(all.begin(), all.end(), last) > 1) {
    return Status::InvalidArgument("--count " + std::to_string(count) +
                                   ": two keys hash alike at the boundary; give another --seed");
  }
  if (last == UINT64_MAX) return Status::InvalidArgument("--count: a key hashes to 2^64 - 1; give another --seed");
  rule->SetCountThreshold(last + 1);
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
  SHARDPACK_RETURN_IF_ERROR(SampleRule::Make(options.rule, d.manifest.classes, env, &rule));
  for (ViewOutput& out : *outputs) {
    const Status s = PrepareViewFolder(env, (outputs->size() > 1 ? "a split of " : "a subset of ") + in, &out);
    if (!s.ok()) {
      for (ViewOutput& made : *outputs) RemoveUnfinishedView(env, made);
      return s;
    }
    out.shards.resize(d.shard_count());
  }
  if (options.rule.count) {
    const Status s = FindCountThreshold(input, options, rule.get());
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
  nlohmann::json rule_json = nlohmann::json::parse(rule->ToJson());
  if (d.view != nullptr) rule_json["of_view"] = nlohmann::json::parse(d.view->manifest.rule_json);
  for (size_t o = 0; o < outputs->size() && failed.ok(); ++o) {
    ViewOutput& out = (*outputs)[o];
    ViewManifest& m = out.manifest;
    m.name = std::filesystem::path(out.dir).lexically_normal().filename().string();
    if (m.name.empty()) m.name = std::filesystem::path(out.dir).lexically_normal().parent_path().filename().string();
    m.tool_version = SHARDPACK_VERSION;
    m.base = BaseAsNamedFrom(out.dir, input.base, d.dir);
    m.base_manifest_xxh64 = d.manifest.manifest_xxh64;
    m.base_generation = d.manifest.generation;
    m.base_samples = d.manifest.samples;
    m.base_shards = d.manifest.shards.size();
    m.base_shards_xxh64 =
        BaseShardsDigest(m.base_shards, [&](size_t i) { return std::string_view(d.manifest.shards[i].xxh64); });
    nlohmann::json r = o < side_rules.size() ? side_rules[o] : rule_json;
    if (!out.side.empty()) r["split"] = out.side;
    m.rule_json = r.dump();
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
  // Cumulative bounds over [0, 2^64): view i takes the hashes in [bound[i-1], bound[i]); the last
  // takes the rest, so rounding never leaves a sample out.
  std::vector<uint64_t> below(fractions.size());
  long double sum = 0;
  for (size_t i = 0; i < fractions.size(); ++i) {
    if (!(fractions[i] > 0 && fractions[i] < 1)) {
      return Status::InvalidArgument("--fractions: " + FormatNumber(fractions[i]) + " is not above 0 and below 1");
    }
    sum += fractions[i];
    below[i] = sum >= 1 ? UINT64_MAX : static_cast<uint64_t>(std::floor(std::ldexp(sum, 64)));
  }
  if (std::fabs(double(sum) - 1) > 1e-9) {
    return Status::InvalidArgument("--fractions add up to " + FormatNumber(double(sum)) +
                                   ": give fractions that "
                                   "add up to 1 (e.g. 0.8,0.1,0.1)");
  }
  const uint64_t seed = r.seed;
  SideOf side_of = [below, seed](const SampleRecord& record) -> size_t {
    const uint64_t h = SampleRule::KeyHash(record.key, seed);
    for (size_t i = 0; i + 1 < below.size(); ++i) {
      if (h < below[i]) return i;
    }
    return below.size() - 1;
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
