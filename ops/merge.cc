// merge: the manifest of a partitioned pack, from its part manifests (ops/pack_partition.h).
#include <cstdio>
#include <map>

#include "ops/object_store_output_env.h"
#include "ops/pack_partition.h"
#include "shardpack/pack.h"

namespace shardpack {
namespace {

struct Part {
  std::string file;
  Manifest manifest;
  PartPlan plan;
  nlohmann::json source;
};

// InvalidArgument naming `part` when it was not packed as `first` was.
Status CheckSamePack(const Part& first, const Part& part) {
  const auto differ = [&](const std::string& what) {
    return Status::InvalidArgument(part.file + " was packed with another " + what + " than " + first.file +
                                   "; rerun that part with the same source and options");
  };
  if (part.source != first.source) return differ("source, input or options");
  if (part.manifest.format != first.manifest.format) return differ("format");
  if (part.manifest.options_json != first.manifest.options_json) return differ("options");
  if (part.manifest.classes != first.manifest.classes) return differ("class list");
  if (part.manifest.tool_version != first.manifest.tool_version) return differ("shardpack version");
  if (part.plan.by_count != first.plan.by_count) return differ("way of cutting shards (--samples-per-shard)");
  return Status::OK();
}

}  // namespace

Status Merge(const std::string& out, Env* env, MergeResult* result) {
  *result = MergeResult();
  std::unique_ptr<Env> output_env;  // OUT in an object store
  SHARDPACK_RETURN_IF_ERROR(OutputEnvFor(out, nullptr, env, &output_env, &env));
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  std::map<uint32_t, Part> parts;
  uint32_t count = 0;
  for (const DirEntry& e : entries) {
    uint32_t index = 0, of = 0;
    if (e.type != DirEntry::Type::kFile || !ParsePartManifestName(e.name, &index, &of)) continue;
    if (count != 0 && of != count) {
      return Status::InvalidArgument(out + " holds parts of a pack in " + std::to_string(count) +
                                     " parts and of one in " + std::to_string(of) + " (" + e.name +
                                     "); remove the ones that do not belong");
    }
    count = of;
    Part& part = parts[index];
    part.file = JoinPath(out, e.name);
    SHARDPACK_RETURN_IF_ERROR(ReadPartManifest(env, part.file, &part.manifest, &part.plan, &part.source));
    if (part.plan.part != index || part.plan.parts != of) {
      return Status::DataLoss(part.file + " describes part " + std::to_string(part.plan.part) + " of " +
                              std::to_string(part.plan.parts) + ", not what its name says");
    }
  }
  if (parts.empty()) {
    return Status::NotFound(out +
                            " holds no part manifests (part-NNNNN-of-NNNNN.json): pack the parts first "
                            "(shardpack pack SRC OUT --partition I/N)");
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (parts.count(i)) continue;
    char name[64];
    std::snprintf(name, sizeof(name), "part-%05u-of-%05u", i, count);
    const bool started = env->FileExists(JoinPath(out, std::string(name) + ".journal.json"));
    return Status::InvalidArgument(
        "part " + std::to_string(i) + " of " + std::to_string(count) +
        (started
             ? " is unfinished (its journal " + std::string(name) + ".journal.json is there): rerun it with --resume"
             : " is missing (no " + std::string(name) + ".json): run it with --partition " + std::to_string(i) + "/" +
                   std::to_string(count)) +
        "; nothing was written");
  }
  const Part& first = parts.begin()->second;
  Manifest merged = first.manifest;
  merged.shards.clear();
  merged.skipped.clear();
  merged.samples = merged.bytes = 0;
  uint64_t next_item = 0;
  for (const auto& [index, part] : parts) {
    SHARDPACK_RETURN_IF_ERROR(CheckSamePack(first, part));
    if (part.plan.begin != next_item || part.plan.inputs != first.plan.inputs) {
      return Status::DataLoss(part.file + " covers other inputs than the parts before it leave off at (" +
                              std::to_string(next_item) + ")");
    }
    next_item = part.plan.end;
    merged.samples += part.manifest.samples;
    merged.bytes += part.manifest.bytes;
    merged.shards.insert(merged.shards.end(), part.manifest.shards.begin(), part.manifest.shards.end());
    merged.skipped.insert(merged.skipped.end(), part.manifest.skipped.begin(), part.manifest.skipped.end());
  }
  if (next_item != first.plan.inputs) {
    return Status::DataLoss("the parts cover " + std::to_string(next_item) + " of " +
                            std::to_string(first.plan.inputs) + " inputs");
  }
  if (merged.samples == 0) {
    return Status::InvalidArgument("no part of " + out + " packed an image (" + std::to_string(merged.skipped.size()) +
                                   " files skipped); nothing was written");
  }
  SHARDPACK_RETURN_IF_ERROR(WriteManifest(env, out, merged));
  result->manifest = std::move(merged);
  result->parts = count;
  return Status::OK();
}

}  // namespace shardpack
