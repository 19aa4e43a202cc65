#include "ops/read/loader_groups.h"

#include <cstring>
#include <string_view>

#include "ops/read/node_group_table.h"
#include "shardpack/buckets.h"

namespace shardpack {
namespace {

// The grouping rule in a line: with the datasets, what the node's table follows from.
std::string GroupingRule(const LoaderOptions& o) {
  if (o.buckets.empty()) {
    return "patch " + std::to_string(o.patch) + " max_side " + std::to_string(o.max_side);
  }
  std::string rule = "buckets";
  for (const Bucket& b : o.buckets) rule += " " + std::to_string(b.width) + "x" + std::to_string(b.height);
  if (o.bucket_choice.any()) {
    rule += " no_upscale " + std::to_string(o.bucket_choice.no_upscale) + " min_side " +
            std::to_string(o.bucket_choice.min_side);
  }
  return rule;
}

// Whether every entry of a table read from the cache folder is one these options make: a bucket
// they list, a grid no wider or taller than max_side allows (so within the budget, which holds
// one image of max_side).
bool EntriesInRange(std::string_view entries, const LoaderOptions& o) {
  if (!o.buckets.empty()) {
    uint8_t most = 0;
    for (const char c : entries) {
      if (uint8_t(c) != kNoLoaderBucket || !o.bucket_choice.any()) most = std::max(most, uint8_t(c));
    }
    return most < o.buckets.size();  // (a loader has at least one bucket)
  }
  const uint32_t sides = o.max_side / o.patch;
  for (size_t at = 0; at + 4 <= entries.size(); at += 4) {
    uint32_t grid;
    std::memcpy(&grid, entries.data() + at, 4);
    const uint32_t columns = GridColumns(grid), rows = GridRows(grid);
    if (columns == 0 || rows == 0 || columns > sides || rows > sides) return false;
  }
  return true;
}

}  // namespace

Status LoaderGroups(const std::vector<std::string>& locations, const LoaderOptions& options,
                    std::shared_ptr<const SampleGroups>* groups, std::vector<SizedDataset>* opened) {
  groups->reset();
  opened->clear();
  const bool bucketed = !options.buckets.empty();
  if (!bucketed && options.patch == 0) return Status::OK();
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<SizedDataset>& datasets = *opened;
  datasets.resize(locations.size());
  for (size_t i = 0; i < locations.size(); ++i) {
    SHARDPACK_RETURN_IF_ERROR(OpenSizedDataset(locations[i], options.remote, env, &datasets[i]));
  }
  const BucketChooser choose(options.buckets, options.bucket_choice);
  // On the threads that read the tables: a bucket (at most kMaxLoaderBuckets) or a patch grid.
  const auto group = [&](uint32_t width, uint32_t height) {
    if (bucketed) {
      const size_t bucket = choose(width, height);
      return bucket == BucketChooser::kNoBucket ? uint32_t(kNoLoaderBucket) : uint32_t(bucket);
    }
    const Bucket size = PatchedSize(width, height, options.max_side, options.patch);
    return PatchGrid(size.width / options.patch, size.height / options.patch);
  };
  // The entries, a byte (a bucket) or a word (a grid) a sample. A dataset at a URL too: its sample
  // tables are read through the server (docs/buckets.md).
  const auto make = [&](std::string* entries) {
    entries->clear();
    const auto add = [&](const std::vector<uint32_t>& shard) {
      if (bucketed) {
        entries->append(shard.begin(), shard.end());  // each below 256
      } else {
        const size_t at = entries->size();
        entries->resize(at + 4 * shard.size());
        std::memcpy(&(*entries)[at], shard.data(), 4 * shard.size());
      }
    };
    for (const SizedDataset& d : datasets) {
      SHARDPACK_RETURN_IF_ERROR(GroupShownSizes(d, options.threads, group, add));
    }
    return Status::OK();
  };
  // (The version: raise it when the way a size maps to its group changes, so that no older table
  // is taken for the new rule.)
  std::string key = "shardpack sample groups 1\n" + GroupingRule(options) + "\n";
  bool vouched = true;  // every dataset's manifest has a checksum that says when it changes
  for (const SizedDataset& d : datasets) {
    const std::string identity = SizesIdentity(d);
    vouched = vouched && !identity.empty();
    key += identity + "\n";
  }
  auto made = std::make_shared<SampleGroups>();
  std::shared_ptr<const void> owner;
  std::string_view entries;
  if (options.remote.cache_dir.empty() || !vouched) {
    auto own = std::make_shared<std::string>();
    SHARDPACK_RETURN_IF_ERROR(make(own.get()));
    entries = *own;
    owner = std::move(own);
    made->origin = "read";
  } else {
    GroupTableSpec spec;
    spec.key = key;
    spec.entry_bytes = bucketed ? 1 : 4;
    spec.valid = [&](std::string_view e) { return EntriesInRange(e, options); };
    spec.make = make;
    NodeGroupTable table;
    SHARDPACK_RETURN_IF_ERROR(
        OpenNodeGroupTable(env, options.remote.cache_dir, CacheModes{options.remote.cache_team}, spec, &table));
    entries = table.entries;
    owner = table.owner;
    made->origin = table.origin == GroupTableOrigin::kMade ? "made" : "mapped";
    made->note = table.note;
  }
  if (bucketed) {
    made->bucket_of = GroupColumn<uint8_t>(owner, reinterpret_cast<const uint8_t*>(entries.data()), entries.size());
  } else {
    // (A mapping starts on a page and a string's buffer on new's alignment: words are aligned.)
    made->patch_grid =
        GroupColumn<uint32_t>(owner, reinterpret_cast<const uint32_t*>(entries.data()), entries.size() / 4);
  }
  *groups = std::move(made);
  return Status::OK();
}

}  // namespace shardpack
