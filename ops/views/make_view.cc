// Subset and Split: the samples of a dataset (or of a view) that meet a rule, written as views
// (docs/views.md). Each base shard's sample table is read on a worker thread, its samples tested,
// and its selection files written; the views' manifests are written last, so a view folder without
// one is a view that was never finished.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "formats/registry/registry.h"
#include "ground/dataset_lock.h"
#include "ground/side_file.h"
#include "ground/status_of_call.h"
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

// The candidates of input shard `shard` (all the base shard's samples, or the input view's
// selection of them), tested: those that meet the rule go to outputs[0], the others to outputs[1].
Status SelectShard(const Input& input, const SampleRule& rule, Env* env, size_t shard,
                   std::vector<ViewOutput>* outputs) {
  const OpenedDataset& d = input.dataset;
  const size_t base_shard = d.view != nullptr ? d.view->manifest.shards[shard].base_shard : shard;
  const ShardEntry& entry = d.manifest.shards[base_shard];
  if (entry.samples > UINT32_MAX) {
    return Status::Unsupported(JoinPath(d.dir, entry.file) +
                               " holds more than 2^32 samples: a view selects by 32-bit positions");
  }
  std::vector<SampleRecord> records;
  SHARDPACK_RETURN_IF_ERROR(d.format->ReadSampleRecords(d.env, d.dir, entry, &records));
  if (records.size() != entry.samples) {
    return Status::DataLoss(JoinPath(d.dir, entry.file) + ": its sample table lists " + std::to_string(records.size()) +
                            " samples, the manifest " + std::to_string(entry.samples) + "; run shardpack verify");
  }
  std::vector<uint32_t> candidates;
  if (d.view != nullptr) {
    SHARDPACK_RETURN_IF_ERROR(
        ReadSelection(d.view->env, d.view->dir, d.view->manifest.shards[shard], entry.samples, &candidates));
  } else {
    candidates.resize(records.size());
    for (uint32_t p = 0; p < candidates.size(); ++p) candidates[p] = p;
  }
  std::vector<uint32_t> taken[2];
  for (uint32_t p : candidates) taken[rule.Matches(records[p]) ? 0 : 1].push_back(p);
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

Status MakeViews(const std::string& in, std::vector<ViewOutput>* outputs, const ViewOptions& options,
                 std::vector<ViewResult*> results) {
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
  std::vector<Status> statuses(d.shard_count());
  std::mutex progress_mu;
  uint64_t done = 0;
  try {
    tbb::task_arena arena(WorkerThreads(options.threads));
    arena.execute([&] {
      tbb::parallel_for(size_t(0), d.shard_count(), [&](size_t shard) {
        statuses[shard] =
            StatusOfCall("selecting samples", [&] { return SelectShard(input, *rule, env, shard, outputs); });
        if (options.on_shard) {
          std::lock_guard<std::mutex> lock(progress_mu);
          options.on_shard(++done, d.shard_count());
        }
      });
    });
  } catch (const std::exception& e) {
    statuses.push_back(Status::IOError(std::string("selecting samples failed: ") + e.what()));
  }
  Status failed;
  for (const Status& s : statuses) {
    if (!s.ok()) {
      failed = s;
      break;
    }
  }
  if (failed.ok()) failed = rule->CheckEveryKeyFound(input.shown);
  // An empty view could only fail later, in whatever reads it: refused here, naming the side.
  for (size_t o = 0; o < outputs->size() && failed.ok(); ++o) {
    const ViewOutput& out = (*outputs)[o];
    if (std::none_of(out.shards.begin(), out.shards.end(), [](const ViewShard& s) { return s.samples > 0; })) {
      failed =
          Status::InvalidArgument((o == 0 ? "no sample of " + input.shown + " meets the rules " + rule->ToJson()
                                          : "every sample of " + input.shown + " meets the rules " + rule->ToJson()) +
                                  ": " + out.dir + " would be an empty view; nothing was written");
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
    nlohmann::json r = rule_json;
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

}  // namespace shardpack
