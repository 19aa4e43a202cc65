// merge: the manifest of a partitioned pack, from its part manifests (ops/pack/pack_partition.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "ground/checksum.h"
#include "ground/dataset_lock.h"
#include "ground/sample_table.h"
#include "ops/pack/output_env.h"
#include "ops/pack/pack_partition.h"
#include "shardpack/pack.h"
#include "storage/location.h"
#include "storage/remote_dataset.h"

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

// Every file the parts list is a file of OUT that is there, listed by one part only: a part
// manifest is outside input, and the merged manifest must not send a reader elsewhere.
Status CheckPartFiles(Env* env, const std::string& out, const std::map<uint32_t, Part>& parts) {
  std::map<std::string, std::string> owner;  // file -> the part manifest that lists it
  for (const auto& [index, part] : parts) {
    std::vector<std::string> names;
    for (const ShardEntry& s : part.manifest.shards) {
      names.push_back(s.file);
      if (!s.index.file.empty()) names.push_back(s.index.file);
      if (!s.sample_table.file.empty()) names.push_back(s.sample_table.file);
      for (const SideFile& f : s.side_files) names.push_back(f.file);
    }
    for (const std::string& name : names) {
      if (const Status s = CheckDatasetFileName(name); !s.ok()) return Status::DataLoss(part.file + ": " + s.message());
      if (!owner.emplace(name, part.file).second) {
        return Status::DataLoss(part.file + " and " + owner[name] + " both list " + name +
                                "; rerun those parts (nothing was written)");
      }
      if (!env->FileExists(JoinPath(out, name))) {
        return Status::DataLoss(part.file + " lists " + name + ", which is not in " + out +
                                "; rerun that part with --resume (nothing was written)");
      }
    }
  }
  return Status::OK();
}

// Writers' parts take their keys from the caller, who may give one key in two parts (or one of the
// "wPPPPP-NNNNNNNNN" form another part generates): two samples under one key that merge and verify
// would both pass. The sample tables list every key. A first pass keeps each key's 64-bit hash
// (8 bytes a sample); only where two hashes meet are the keys themselves compared, so a collision
// of hashes is never taken for a repeat. Shards without a sample table (lmdb cannot be written in
// parts) have no keys to check.
Status CheckKeysAreUnique(Env* env, const std::string& out, const std::map<uint32_t, Part>& parts) {
  std::vector<uint64_t> hashes;
  std::vector<SampleRecord> records;
  for (const auto& [index, part] : parts) {
    for (const ShardEntry& shard : part.manifest.shards) {
      if (shard.sample_table.file.empty()) continue;
      SHARDPACK_RETURN_IF_ERROR(ReadSampleTable(env, out, shard, &records));
      for (const SampleRecord& r : records) hashes.push_back(Xxh64(r.key));
    }
  }
  std::sort(hashes.begin(), hashes.end());
  std::set<uint64_t> shared;
  for (size_t i = 1; i < hashes.size(); ++i) {
    if (hashes[i] == hashes[i - 1]) shared.insert(hashes[i]);
  }
  if (shared.empty()) return Status::OK();
  std::map<std::string, std::string> seen;  // key -> "part file, shard" where it was first found
  for (const auto& [index, part] : parts) {
    for (const ShardEntry& shard : part.manifest.shards) {
      if (shard.sample_table.file.empty()) continue;
      SHARDPACK_RETURN_IF_ERROR(ReadSampleTable(env, out, shard, &records));
      for (const SampleRecord& r : records) {
        if (!shared.count(Xxh64(r.key))) continue;
        const std::string where = part.file + " (" + shard.file + ")";
        const auto [at, first] = seen.emplace(r.key, where);
        if (!first) {
          return Status::InvalidArgument("key '" + r.key + "' is given to a sample in " + at->second + " and in " +
                                         where +
                                         ": keys must be unique across the writers' parts (and may not take the "
                                         "wPPPPP-NNNNNNNNN form of index keys); write those parts again with "
                                         "unique keys. Nothing was written");
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status Merge(const std::string& out, const MergeOptions& options, MergeResult* result) {
  *result = MergeResult();
  Location out_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out, &out_location));
  Env* env = nullptr;
  std::unique_ptr<Env> output_env;  // OUT in an object store
  SHARDPACK_RETURN_IF_ERROR(OutputEnvFor(out_location, nullptr, options.remote, options.env, &output_env, &env));
  // The dataset folder's writer lock, as every run that adds to a dataset holds: two merges would
  // write manifest.json.tmp at once (a reader could see half a manifest), and an append (or a Writer
  // appending) must not read a manifest this merge is about to replace. An object store has no
  // locks: each process stages its own files.
  std::unique_ptr<DatasetFolderLock> folder_lock;
  if (out_location.local() && env->FileExists(out)) {
    SHARDPACK_RETURN_IF_ERROR(LockDatasetFolder(env, out, "a merge", &folder_lock));
  }
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  std::map<uint32_t, Part> parts;
  uint32_t count = 0;
  bool writers = false;  // the parts are SampleWriters' (writer-*.json), not pack --partition's
  for (const DirEntry& e : entries) {
    uint32_t index = 0, of = 0;
    bool writer = false;
    if (e.type != DirEntry::Type::kFile || !ParsePartManifestName(e.name, &index, &of, &writer)) continue;
    if (count != 0 && writer != writers) {
      return Status::InvalidArgument(out + " holds parts of a pack (part-*.json) and parts written by writers (" +
                                     "writer-*.json); merge them in separate folders");
    }
    writers = writer;
    if (count != 0 && of != count) {
      return Status::InvalidArgument(out + " holds parts of a pack in " + std::to_string(count) +
                                     " parts and of one in " + std::to_string(of) + " (" + e.name +
                                     "); remove the ones that do not belong");
    }
    count = of;
    Part& part = parts[index];
    part.file = JoinPath(out, e.name);
    SHARDPACK_RETURN_IF_ERROR(ReadPartManifest(env, part.file, &part.manifest, &part.plan, &part.source));
    if (part.plan.part != index || part.plan.parts != of || part.plan.writer != writer) {
      return Status::DataLoss(part.file + " describes part " + std::to_string(part.plan.part) + " of " +
                              std::to_string(part.plan.parts) + ", not what its name says");
    }
  }
  if (parts.empty()) {
    return Status::NotFound(out +
                            " holds no part manifests (part-NNNNN-of-NNNNN.json or writer-NNNNN-of-NNNNN.json): "
                            "pack the parts first (shardpack pack SRC OUT --partition I/N), or close the writers");
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (parts.count(i)) continue;
    const std::string name = PartName(i, count, writers);
    const bool started = env->FileExists(JoinPath(out, std::string(name) + ".journal.json"));
    if (writers) {  // a writer does not resume: its part is written again
      return Status::InvalidArgument("writer part " + std::to_string(i) + " of " + std::to_string(count) +
                                     (started ? " is unfinished (its journal " + name + ".journal.json is there)"
                                              : " is missing (no " + name + ".json)") +
                                     ": run that writer again (part=" + std::to_string(i) +
                                     ", parts=" + std::to_string(count) + ") and close it; nothing was written");
    }
    return Status::InvalidArgument(
        "part " + std::to_string(i) + " of " + std::to_string(count) +
        (started ? " is unfinished (its journal " + name + ".journal.json is there): rerun it with --resume"
                 : " is missing (no " + name + ".json): run it with --partition " + std::to_string(i) + "/" +
                       std::to_string(count)) +
        "; nothing was written");
  }
  const Part& first = parts.begin()->second;
  SHARDPACK_RETURN_IF_ERROR(CheckPartFiles(env, out, parts));
  if (writers) SHARDPACK_RETURN_IF_ERROR(CheckKeysAreUnique(env, out, parts));
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
