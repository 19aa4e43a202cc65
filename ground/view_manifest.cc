#include "ground/view_manifest.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "ground/checksum.h"
#include "ground/json_integer.h"
#include "ground/manifest_json.h"
#include "ground/shell_quote.h"
#include "ground/side_file.h"
#include "ground/units.h"

namespace shardpack {
namespace {

using nlohmann::json;

uint64_t UnsignedIn(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!IsJsonIntegerIn(v, 0, UINT64_MAX)) {
    throw std::invalid_argument(std::string("\"") + key + "\" is " + v.dump() + ", not a non-negative integer");
  }
  return v.get<uint64_t>();
}

// A name the view's manifest lists must stay inside the view folder.
void CheckPlainName(const std::string& file) {
  if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..") {
    throw std::invalid_argument("selection file \"" + file + "\" is not a plain file name");
  }
}

}  // namespace

bool IsViewJson(const json& j) { return j.is_object() && j.contains("view"); }

Status NotAPackedDataset(const std::string& path, const json& view_json) {
  std::string base = "another dataset";
  const json& v = view_json.at("view");
  if (v.is_object() && v.contains("base") && v.at("base").is_string()) base = v.at("base").get<std::string>();
  return Status::InvalidArgument(
      path + " is a view of " + base +
      " (made by shardpack subset or split), not a packed dataset: this needs a dataset "
      "with shards of its own; `shardpack convert VIEW NEW` writes the view's samples as one");
}

std::string SelectionFileName(uint64_t base_shard) {
  char name[48];
  std::snprintf(name, sizeof(name), "selection-%06llu.u32", static_cast<unsigned long long>(base_shard));
  return name;
}

std::string EncodeSelection(const std::vector<uint32_t>& positions) {
  std::string out(positions.size() * 4, '\0');
  for (size_t i = 0; i < positions.size(); ++i) {
    const uint32_t p = positions[i];
    for (int b = 0; b < 4; ++b) out[4 * i + b] = char((p >> (8 * b)) & 0xff);
  }
  return out;
}

Status ReadSelection(Env* env, const std::string& view_dir, const ViewShard& shard, uint64_t base_shard_samples,
                     std::vector<uint32_t>* positions) {
  std::string bytes;
  SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, view_dir, shard.selection, &bytes));
  const std::string path = JoinPath(view_dir, shard.selection.file);
  // Divided, not multiplied: a claimed count of 2^62 positions times 4 bytes wraps to 0.
  if (bytes.size() % 4 != 0 || bytes.size() / 4 != shard.samples) {
    return Status::DataLoss(path + " holds " + std::to_string(bytes.size()) + " bytes, not 4 for each of the " +
                            std::to_string(shard.samples) +
                            " positions the view's manifest lists; make the view again");
  }
  positions->resize(shard.samples);
  for (size_t i = 0; i < positions->size(); ++i) {
    uint32_t p = 0;
    for (int b = 0; b < 4; ++b) p |= uint32_t(uint8_t(bytes[4 * i + b])) << (8 * b);
    // Ascending and inside the shard: the reader maps position to sample without another check.
    if (p >= base_shard_samples || (i > 0 && p <= (*positions)[i - 1])) {
      return Status::DataLoss(path + ": position " + std::to_string(i) + " is " + std::to_string(p) +
                              ", not above the one before it and below the base shard's " +
                              std::to_string(base_shard_samples) + " samples; make the view again");
    }
    (*positions)[i] = p;
  }
  return Status::OK();
}

std::string BaseShardsDigest(uint64_t count, const std::function<std::string_view(size_t)>& shard_xxh64) {
  std::string lines;
  for (uint64_t i = 0; i < count; ++i) {
    lines += shard_xxh64(size_t(i));
    lines += '\n';
  }
  return ChecksumHex(Xxh64(lines));
}

void RecordViewBase(const Manifest& base, ViewManifest* view) {
  view->base_manifest_xxh64 = base.manifest_xxh64;
  view->base_generation = base.generation;
  view->base_samples = base.samples;
  view->base_shards = base.shards.size();
  view->base_shards_xxh64 =
      BaseShardsDigest(view->base_shards, [&](size_t i) { return std::string_view(base.shards[i].xxh64); });
}

Status CheckViewBase(const ViewManifest& view, const std::string& view_shown, const ManifestHeader& base,
                     const std::vector<uint64_t>& base_shard_samples,
                     const std::function<std::string_view(size_t)>& base_shard_xxh64, const std::string& base_shown,
                     uint64_t* newer) {
  if (newer != nullptr) *newer = 0;
  // Grown by appends: a later generation whose first shards are the view's base's, untouched.
  const bool grown = base.manifest_xxh64 != view.base_manifest_xxh64 && !view.base_shards_xxh64.empty() &&
                     base.generation > view.base_generation && base_shard_samples.size() >= view.base_shards &&
                     base.samples >= view.base_samples &&
                     BaseShardsDigest(view.base_shards, base_shard_xxh64) == view.base_shards_xxh64;
  if (grown && newer != nullptr) *newer = base.samples - view.base_samples;
  if (base.manifest_xxh64 != view.base_manifest_xxh64 && !grown) {
    const std::string grew = base.generation > view.base_generation ? " (shardpack append added to it)" : "";
    return Status::InvalidArgument(
        "view " + view_shown + " was made from " + base_shown + " as it was then (generation " +
        std::to_string(view.base_generation) + ", " + std::to_string(view.base_samples) + " samples, manifest_xxh64 " +
        view.base_manifest_xxh64 + "); " + base_shown + " has changed since" + grew + " (generation " +
        std::to_string(base.generation) + ", " + std::to_string(base.samples) + " samples, manifest_xxh64 " +
        base.manifest_xxh64 + "): make the view again into a new folder: " + RemakeViewCommand(view, base_shown) +
        " (a split by fraction puts every sample on the side it was on)");
  }
  for (const ViewShard& s : view.shards) {
    if (s.base_shard >= base_shard_samples.size() || s.samples > base_shard_samples[s.base_shard]) {
      return Status::InvalidArgument("view " + view_shown + " selects " + std::to_string(s.samples) +
                                     " samples of shard " + std::to_string(s.base_shard) + ", which " + base_shown +
                                     " does not have: make the view again");
    }
  }
  return Status::OK();
}

namespace {

// A view's rule (what SampleRule::ToJson and the split record) as the flags that give it.
std::string RuleFlags(const json& rule) {
  std::string flags;
  const auto add = [&](const std::string& flag, const std::string& value) {
    flags += " " + flag + (value.empty() ? "" : " " + ShellWord(value));
  };
  const auto number = [](const json& v) { return v.is_number_float() ? FormatNumber(v.get<double>()) : v.dump(); };
  if (rule.contains("classes")) {
    std::string names;
    for (const json& c : rule["classes"]) names += (names.empty() ? "" : ",") + c.get<std::string>();
    add("--classes", names);
  }
  if (rule.contains("keys")) add("--keys", "KEYS_FILE");
  if (rule.contains("where")) add("--where", rule["where"].get<std::string>());
  if (rule.contains("fraction")) add("--fraction", number(rule["fraction"]));
  if (rule.contains("count")) add("--count", number(rule["count"]));
  if (rule.contains("fractions")) {
    std::string list;
    for (const json& f : rule["fractions"]) list += (list.empty() ? "" : ",") + number(f);
    add("--fractions", list);
  }
  if (rule.contains("seed")) add("--seed", number(rule["seed"]));
  if (rule.value("stratify", false)) add("--stratify", "");
  if (rule.value("relabel", false)) add("--relabel", "");
  return flags;
}

}  // namespace

std::string RemakeViewCommand(const ViewManifest& view, const std::string& base_shown) {
  json rule = json::parse(view.rule_json, nullptr, /*allow_exceptions=*/false);
  if (!rule.is_object()) return "shardpack subset or split with its rule";
  // A view of a view: from the view it was made of (that one's own rule recorded beside).
  const std::string base = rule.contains("of_view") ? "VIEW_IT_WAS_MADE_OF" : ShellWord(base_shown);
  const std::string flags = RuleFlags(rule);
  std::string command;
  if (rule.contains("part") && rule.contains("fractions")) {
    const size_t part = rule["part"].get<size_t>(), parts = rule["fractions"].size();
    command = "shardpack split " + base;
    for (size_t i = 0; i < parts; ++i) command += " OUT_" + std::to_string(i + 1);
    command += flags + " (this view is OUT_" + std::to_string(part + 1) + ")";
  } else if (rule.contains("split")) {
    const bool matches = rule["split"] == "matches";
    command =
        "shardpack split " + base + " OUT_A OUT_B" + flags + " (this view is " + (matches ? "OUT_A" : "OUT_B") + ")";
  } else {
    command = "shardpack subset " + base + " OUT" + flags;
  }
  if (rule.contains("of_view")) {
    command += ", VIEW_IT_WAS_MADE_OF being a view of " + ShellWord(base_shown) + " by" + RuleFlags(rule["of_view"]);
  }
  return command;
}

int32_t ViewLabel(const ViewManifest& view, int32_t base_label) {
  if (view.base_labels.empty()) return base_label;
  // A linear search: a relabelled view has the few classes it was made with, and stat and the
  // reader call this once a sample.
  const auto at = std::find(view.base_labels.begin(), view.base_labels.end(), base_label);
  return at == view.base_labels.end() || base_label < 0 ? -1 : int32_t(at - view.base_labels.begin());
}

Status WriteViewManifest(Env* env, const std::string& dir, const ViewManifest& view) {
  json shards = json::array();
  for (const ViewShard& s : view.shards) {
    shards.push_back({{"base_shard", s.base_shard},
                      {"samples", s.samples},
                      {"selection", {{"file", s.selection.file}, {"xxh64", s.selection.xxh64}}}});
  }
  json j = {{"view",
             {{"version", kViewVersion},
              {"base", view.base},
              {"base_manifest_xxh64", view.base_manifest_xxh64},
              {"base_generation", view.base_generation},
              {"base_samples", view.base_samples},
              {"base_shards", view.base_shards},
              {"base_shards_xxh64", view.base_shards_xxh64},
              {"rule", json::parse(view.rule_json)}}},
            {"name", view.name},
            {"shardpack_version", view.tool_version},
            {"samples", view.samples},
            {"shards", std::move(shards)}};
  if (!view.base_labels.empty()) {
    j["view"]["classes"] = view.classes;
    j["view"]["base_labels"] = view.base_labels;
  }
  j[kManifestChecksumKey] = SelfChecksum(j);
  SHARDPACK_RETURN_IF_ERROR(WriteFileAtomically(env, JoinPath(dir, kManifestFileName), j.dump(2) + "\n"));
  return env->SyncDir(dir);
}

Status ParseViewManifest(json j, const std::string& path, ViewManifest* view) {
  *view = ViewManifest();
  // A view's manifest says which samples are read, and from where: a changed one is refused.
  SHARDPACK_RETURN_IF_ERROR(CheckSelfChecksum(&j, path));
  try {
    const json& v = j.at("view");
    const uint64_t version = UnsignedIn(v, "version");
    if (version != kViewVersion) {
      return Status::Unsupported(path + ": view version " + std::to_string(version) +
                                 " is not supported by this shardpack (it reads version " +
                                 std::to_string(kViewVersion) + ")");
    }
    view->base = v.at("base").get<std::string>();
    view->base_manifest_xxh64 = v.at("base_manifest_xxh64").get<std::string>();
    view->base_generation = UnsignedIn(v, "base_generation");
    view->base_samples = UnsignedIn(v, "base_samples");
    if (v.contains("base_shards")) {
      view->base_shards = UnsignedIn(v, "base_shards");
      view->base_shards_xxh64 = v.at("base_shards_xxh64").get<std::string>();
    }
    view->rule_json = v.value("rule", json::object()).dump();
    if (v.contains("base_labels")) {
      view->classes = v.at("classes").get<std::vector<std::string>>();
      view->base_labels = v.at("base_labels").get<std::vector<int32_t>>();
      std::set<int32_t> distinct(view->base_labels.begin(), view->base_labels.end());
      if (view->classes.size() != view->base_labels.size() || distinct.size() != view->base_labels.size() ||
          (!distinct.empty() && *distinct.begin() < 0)) {
        throw std::invalid_argument("\"classes\" and \"base_labels\" are not one distinct base label a class");
      }
    }
    view->name = j.value("name", "");
    view->tool_version = j.value("shardpack_version", "");
    view->samples = UnsignedIn(j, "samples");
    uint64_t sum = 0;
    for (const json& s : j.at("shards")) {
      ViewShard shard;
      shard.base_shard = UnsignedIn(s, "base_shard");
      shard.samples = UnsignedIn(s, "samples");
      shard.selection.file = s.at("selection").at("file").get<std::string>();
      shard.selection.xxh64 = s.at("selection").at("xxh64").get<std::string>();
      CheckPlainName(shard.selection.file);
      if (shard.samples == 0 || (!view->shards.empty() && shard.base_shard <= view->shards.back().base_shard)) {
        throw std::invalid_argument("the shard list is not in ascending base_shard order with samples in each");
      }
      if (shard.samples > UINT64_MAX - sum) throw std::invalid_argument("the shards' samples add up past 2^64");
      sum += shard.samples;
      view->shards.push_back(std::move(shard));
    }
    if (sum != view->samples) throw std::invalid_argument("\"samples\" is not the sum of the shards' samples");
    if (view->base.empty()) throw std::invalid_argument("\"base\" is empty");
  } catch (const std::exception& e) {  // nlohmann's (missing key, wrong type) and ours
    return Status::DataLoss(path + ": the view's manifest is malformed: " + e.what());
  }
  return Status::OK();
}

}  // namespace shardpack
