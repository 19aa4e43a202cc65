// RefreshView: a view brought to its base's latest generation (docs/views.md). An append adds shards
// after the base's and never rewrites one, so the view's selections of the old shards stand as they
// are; the rule it records is applied to the appended shards alone, and the manifest, written last,
// names the new generation. A rule that an append can change (a count, a stratified share) is
// refused: its old samples could move between sides.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "ground/dataset_lock.h"
#include "ground/side_file.h"
#include "ground/view_manifest.h"
#include "ops/read/opened_dataset.h"
#include "ops/views/sample_rule.h"
#include "ops/views/shard_tasks.h"
#include "shardpack/view.h"
#include "storage/location.h"

namespace shardpack {
namespace {

using nlohmann::json;
// Whether a sample of the base (with its base label) belongs to the view.
using Membership = std::function<bool(const SampleRecord&)>;

// The test a recorded rule makes of a sample, its "of_view" (the rule of the view it was made of)
// included. `refuse` is the message's start and end for a rule that cannot be applied again.
Status MembershipOf(const json& rule, const std::vector<std::string>& base_classes, bool relabelled, Env* env,
                    const std::function<Status(const std::string&)>& refuse, Membership* test) {
  if (rule.contains("count") || rule.value("stratify", false)) {
    return refuse(std::string("it took ") + (rule.contains("count") ? "--count" : "--stratify") +
                  " samples, which an append can change");
  }
  if (relabelled && rule.contains("where")) {
    return refuse("its --where is in the labels of a relabelled view, which the base's samples do not carry");
  }
  Membership inner;
  if (rule.contains("of_view")) {
    SHARDPACK_RETURN_IF_ERROR(MembershipOf(rule["of_view"], base_classes, relabelled, env, refuse, &inner));
  }
  Membership level;
  const uint64_t seed = rule.value("seed", uint64_t(0));
  if (rule.contains("fractions") && rule.contains("part")) {
    std::vector<uint64_t> below;
    SHARDPACK_RETURN_IF_ERROR(SampleRule::FractionBounds(rule["fractions"].get<std::vector<double>>(), &below));
    const size_t part = rule["part"].get<size_t>();
    level = [below, part, seed](const SampleRecord& r) { return SampleRule::FractionPart(r.key, below, seed) == part; };
  } else if (rule.contains("keys")) {
    // A keys file names samples that were all found when the view was made: an appended sample is
    // none of them.
    level = [](const SampleRecord&) { return false; };
  } else {
    ViewRule v;
    if (rule.contains("classes")) v.classes = rule["classes"].get<std::vector<std::string>>();
    if (rule.contains("where")) v.where = rule["where"].get<std::string>();
    if (rule.contains("fraction")) v.fraction = rule["fraction"].get<double>();
    v.seed = seed;
    std::shared_ptr<SampleRule> sample_rule;
    std::unique_ptr<SampleRule> made;
    SHARDPACK_RETURN_IF_ERROR(SampleRule::Make(v, base_classes, env, &made));
    sample_rule = std::move(made);
    level = [sample_rule](const SampleRecord& r) { return sample_rule->Matches(r); };
  }
  const bool rest = rule.value("split", "") == "rest";
  *test = [inner, level, rest](const SampleRecord& r) { return (!inner || inner(r)) && level(r) != rest; };
  return Status::OK();
}

// Selects the samples of base shards [first, count) that `test` takes into selection files of the
// view's folder: the new ViewShards, ascending (shards with none left out).
Status SelectAppended(const OpenedDataset& d, const Membership& test, size_t first, const ViewOptions& options,
                      std::vector<ViewShard>* added) {
  const size_t count = d.manifest.shards.size();
  std::vector<ViewShard> made(count - first);
  const Status failed = ForEachShardTask(
      first, count, options.threads, "selecting appended samples", options.on_shard, [&](size_t shard) -> Status {
        const ShardEntry& entry = d.manifest.shards[shard];
        std::vector<SampleRecord> records;
        SHARDPACK_RETURN_IF_ERROR(d.format->ReadSampleRecords(d.env, d.dir, entry, &records));
        if (records.size() != entry.samples || entry.samples > UINT32_MAX) {
          return Status::DataLoss(JoinPath(d.dir, entry.file) + ": its sample table lists " +
                                  std::to_string(records.size()) + " samples, the manifest " +
                                  std::to_string(entry.samples) + "; run shardpack verify");
        }
        std::vector<uint32_t> taken;
        for (uint32_t p = 0; p < records.size(); ++p) {
          if (test(records[p])) taken.push_back(p);
        }
        ViewShard& s = made[shard - first];
        s.base_shard = shard;
        if (taken.empty()) return Status::OK();
        s.selection.file = SelectionFileName(shard);
        s.samples = taken.size();
        return PublishSideFile(d.view->env, d.view->dir, s.selection.file, EncodeSelection(taken), /*sync=*/true,
                               &s.selection);
      });
  for (ViewShard& s : made) {
    if (s.samples == 0) continue;
    // On failure none of these is named by a manifest: removed (a later refresh would overwrite one).
    if (!failed.ok()) (void)d.view->env->RemoveFile(JoinPath(d.view->dir, s.selection.file));
    added->push_back(std::move(s));
  }
  return failed;
}

}  // namespace

Status RefreshView(const std::string& view, const ViewOptions& options, RefreshResult* result) {
  *result = RefreshResult();
  result->view = view;
  Env* env = options.env != nullptr ? options.env : Env::Default();
  Location location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(view, &location));
  if (!location.local() || location.shard_list) {
    return Status::InvalidArgument(location.shown + ": refresh rewrites a view's manifest, in a local folder");
  }
  // The view's writer lock before its manifest is read: two refreshes (or a refresh and a subset
  // into the folder) never both write it.
  std::unique_ptr<DatasetFolderLock> lock;
  SHARDPACK_RETURN_IF_ERROR(LockDatasetFolder(env, view, "a refresh of view " + view, &lock));
  OpenedDataset d;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(location, options.remote, env, &d, /*check_manifest=*/true));
  if (d.view == nullptr) {
    return Status::InvalidArgument(location.shown +
                                   " is a dataset, not a view: refresh brings a view (shardpack subset or split) to "
                                   "its base's latest generation");
  }
  const ViewManifest& old = d.view->manifest;
  result->samples = old.samples;
  result->shards = old.shards.size();
  result->generation = d.manifest.generation;
  if (d.manifest.manifest_xxh64 == old.base_manifest_xxh64) return Status::OK();  // up to date
  result->appended = d.view_base_newer;
  // For people: "val/../ds" as "ds" (the view names its base relative to itself).
  std::string base_shown = ViewBaseLocation(*d.view);
  if (Location b; ParseLocation(base_shown, &b).ok() && b.local()) {
    base_shown = std::filesystem::path(base_shown).lexically_normal().string();
  }
  const auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument("view " + location.shown + " cannot take the samples appended to " + base_shown +
                                   ": " + why +
                                   "; make it again into a new folder: " + RemakeViewCommand(old, base_shown));
  };
  Membership test;
  SHARDPACK_RETURN_IF_ERROR(
      MembershipOf(json::parse(old.rule_json), d.manifest.classes, !old.base_labels.empty(), env, refuse, &test));
  std::vector<ViewShard> added;
  SHARDPACK_RETURN_IF_ERROR(SelectAppended(d, test, size_t(old.base_shards), options, &added));
  ViewManifest m = old;
  m.tool_version = SHARDPACK_VERSION;
  RecordViewBase(d.manifest, &m);
  for (ViewShard& s : added) {
    result->added += s.samples;
    m.samples += s.samples;
    m.shards.push_back(std::move(s));
  }
  const Status written = WriteViewManifest(d.view->env, d.view->dir, m);
  if (!written.ok()) {
    for (size_t i = old.shards.size(); i < m.shards.size(); ++i) {
      (void)d.view->env->RemoveFile(JoinPath(d.view->dir, m.shards[i].selection.file));
    }
    return written;
  }
  result->samples = m.samples;
  result->shards = m.shards.size();
  return Status::OK();
}

}  // namespace shardpack
