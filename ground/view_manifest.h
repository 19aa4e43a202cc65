// A view: a dataset made of some of another's samples (`shardpack subset`, `shardpack split`;
// docs/views.md), without a copy of any of them. Its folder holds a manifest that names its base
// dataset and the base manifest's checksum, and, for each base shard it takes samples from, a
// selection file: the positions of those samples in the shard.
//
// Selection file ("selection-<base shard, 6 digits>.u32"): the positions, each a little-endian
// uint32, strictly ascending, each below the base shard's sample count; nothing else. Its XXH64 is
// in the view's manifest, which is written last, atomically, with its checksum of itself.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

inline constexpr int kViewVersion = 1;

// The samples a view takes from one base shard.
struct ViewShard {
  uint64_t base_shard = 0;  // in the base manifest's order
  uint64_t samples = 0;     // how many positions its selection file holds (at least 1)
  SideFile selection;
};

struct ViewManifest {
  std::string name;  // the view folder's base name
  std::string tool_version;
  std::string base;                 // the base dataset: relative to the view folder, or a URL
  std::string base_manifest_xxh64;  // the base manifest's checksum of itself when the view was made
  uint64_t base_generation = 0;     // ... its generation (docs/views.md: appends)
  uint64_t base_samples = 0;        // ... and its sample count
  // ... its shard count, and BaseShardsDigest of them: an append adds shards after these and never
  // rewrites them, so a base whose first base_shards shards still digest to this is the view's base
  // grown by appends, which the view keeps reading as it was. Empty in views made before.
  uint64_t base_shards = 0;
  std::string base_shards_xxh64;
  std::string rule_json = "{}";  // how the samples were chosen (compact JSON), for people
  // A relabelled view (`subset --classes ... --relabel`): its own classes, class i being the base's
  // class base_labels[i]; its samples read with label i. Both empty: the base's labels and classes.
  std::vector<std::string> classes;
  std::vector<int32_t> base_labels;
  uint64_t samples = 0;           // the sum of the shards' samples
  std::vector<ViewShard> shards;  // ascending base_shard
};

// The label a sample of base label `base_label` has in `view`: itself when the view is not
// relabelled, else its place in view.base_labels (-1 when none: not a class of the view).
int32_t ViewLabel(const ViewManifest& view, int32_t base_label);

// Whether a parsed manifest.json is a view's (it has a "view" object).
bool IsViewJson(const nlohmann::json& j);
// What a command that needs a packed dataset says of a view's manifest at `path`.
Status NotAPackedDataset(const std::string& path, const nlohmann::json& view_json);

// The selection file's name for base shard `base_shard`.
std::string SelectionFileName(uint64_t base_shard);
std::string EncodeSelection(const std::vector<uint32_t>& positions);
// Reads shard's selection file in `view_dir`, checked against the manifest's XXH64 and for its
// form (count, order, each position below `base_shard_samples`): DataLoss naming the file otherwise.
Status ReadSelection(Env* env, const std::string& view_dir, const ViewShard& shard, uint64_t base_shard_samples,
                     std::vector<uint32_t>* positions);

// The XXH64 of the first `count` shards' checksums (shard_xxh64(i) for i < count), one a line: what
// a view records of its base's shards.
std::string BaseShardsDigest(uint64_t count, const std::function<std::string_view(size_t)>& shard_xxh64);

// Records in `view` the base it reads as `base` is now: its manifest's checksum, generation,
// samples, shard count and BaseShardsDigest (what CheckViewBase checks). For a view being made, and
// one refreshed after appends.
void RecordViewBase(const Manifest& base, ViewManifest* view);

// Whether `base` (its manifest's header, each shard's sample count and checksum) is the dataset the
// view was made from, or that dataset grown by appends (its first view.base_shards shards as they
// were, a later generation): then *newer (when given) says how many samples the appends added,
// which the view does not select. Every selection must lie within its shard. InvalidArgument saying
// what changed and how to make the view again otherwise. view_shown, base_shown: for messages.
Status CheckViewBase(const ViewManifest& view, const std::string& view_shown, const ManifestHeader& base,
                     const std::vector<uint64_t>& base_shard_samples,
                     const std::function<std::string_view(size_t)>& base_shard_xxh64, const std::string& base_shown,
                     uint64_t* newer = nullptr);

// The command that makes `view` again from `base_shown` (its rule as flags), for messages: e.g.
// "shardpack split /data/ds VAL TRAIN --fraction 0.05 --seed 7 (this view is VAL)".
std::string RemakeViewCommand(const ViewManifest& view, const std::string& base_shown);

// Writes dir/manifest.json for `view`, atomically, with its checksum of itself.
Status WriteViewManifest(Env* env, const std::string& dir, const ViewManifest& view);
// Parses a view's manifest (checked against its checksum of itself; `path` for messages).
// DataLoss naming the field when malformed, Unsupported for a newer view version.
Status ParseViewManifest(nlohmann::json j, const std::string& path, ViewManifest* view);

// dir/manifest.json, which may be a dataset's or a view's: *is_view tells which was read, into
// `manifest` or `view`. checked: a dataset's manifest is checked against its checksum of itself as
// ReadCheckedManifest does (a view's always is).
Status ReadManifestOrView(Env* env, const std::string& dir, bool checked, Manifest* manifest, ViewManifest* view,
                          bool* is_view);

}  // namespace shardpack
