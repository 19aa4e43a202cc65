#include "ops/read/shown_sizes.h"

#include <utility>
#include <vector>

#include "ground/ordered_pipeline.h"
#include "ground/sample_table.h"
#include "ground/status_of_call.h"
#include "ground/worker_threads.h"
#include "ops/read/opened_dataset.h"

namespace shardpack {
namespace {

// One shard's sizes as shown and their groups, in its order, or why they cannot be had.
struct ShardSizes {
  size_t shard = 0;
  Status status;
  std::vector<ShownSize> sizes;
  std::vector<uint32_t> groups;
};

// The message for shard `shard`, whose sizes hold a 0: its records are read again for the first
// such sample's key (the sizes alone do not carry keys; this runs once, on the way out).
Status NoSizeRecorded(const OpenedDataset& dataset, size_t shard, const std::string& shown,
                      const std::string& convert) {
  std::vector<SampleRecord> records;
  SHARDPACK_RETURN_IF_ERROR(dataset.ReadSampleRecords(shard, &records));
  std::string key = "?";
  for (const SampleRecord& r : records) {
    if (r.width == 0 || r.height == 0) {
      key = r.key;
      break;
    }
  }
  return Status::InvalidArgument("buckets and token budgets need each image's size, and sample " + key + " of " +
                                 shown + " (shard " + dataset.shard_file(shard) + ") has none recorded" + convert);
}

}  // namespace

Status OpenSizedDataset(const std::string& location, const RemoteOptions& remote, Env* env, SizedDataset* dataset) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  dataset->shown = parsed.shown;
  dataset->convert = "; `shardpack convert " + parsed.shown + " NEW --format wds` writes a dataset that has them";
  if (parsed.shard_list) {
    // Sizes are read from sample tables the manifest lists (and checks); shards named by a list have
    // no manifest, whatever lies beside them. convert takes one shard or a folder of them, not a list.
    const bool one =
        parsed.shown.find_first_of("{*?") == std::string::npos && parsed.shown.find("::") == std::string::npos;
    return Status::InvalidArgument(
        "buckets and token budgets need each image's size from the sample tables a dataset's manifest lists, and " +
        parsed.shown + (one ? " is a shard" : " are shards") + " without a manifest" +
        (one ? dataset->convert
             : "; `shardpack convert FOLDER NEW --format wds`, FOLDER holding these shards, writes a dataset that "
               "has them"));
  }
  // The manifest checked, as a reader checks it: the reader may be made over this opening.
  SHARDPACK_RETURN_IF_ERROR(
      OpenDataset(parsed, remote, env != nullptr ? env : Env::Default(), &dataset->opened, /*check_manifest=*/true));
  dataset->local = !parsed.remote() && dataset->opened.view == nullptr;
  return Status::OK();
}

std::string SizesIdentity(const SizedDataset& dataset) {
  const OpenedDataset& d = dataset.opened;
  if (d.manifest.manifest_xxh64.empty()) return "";
  std::string identity = "manifest " + d.manifest.manifest_xxh64;
  if (d.view != nullptr) {
    identity += " view";
    for (const ViewShard& shard : d.view->manifest.shards) {
      identity += " " + std::to_string(shard.base_shard) + ":" + shard.selection.xxh64;
    }
  }
  return identity;
}

Status GroupShownSizes(const SizedDataset& sized, int threads,
                       const std::function<uint32_t(uint32_t width, uint32_t height)>& group,
                       const std::function<void(const std::vector<uint32_t>& groups)>& add) {
  const OpenedDataset& dataset = sized.opened;
  // The tables are read and parsed, and their samples grouped, on `threads` threads, as stat reads
  // them (100,000 tables of 10,000 samples took 144 s on one core); `add` only appends, in dataset
  // order. At most two shards a thread are in flight.
  const int workers = WorkerThreads(threads);
  std::vector<ShardSizes> slots(size_t(2 * workers));
  size_t next = 0;
  uint64_t samples = 0;
  const auto read = [&](ShardSizes* t, bool* done) {
    *done = next == dataset.shard_count();
    if (!*done) t->shard = next++;
    return Status::OK();
  };
  const auto work = [&](ShardSizes* t) {
    // The sizes alone, not whole records: no key strings made (shardpack_micro_bench
    // BM_ParseShownSizes against BM_ParseSampleTable).
    t->status = StatusOfCall("reading a sample table", [&] {
      SHARDPACK_RETURN_IF_ERROR(dataset.ReadShownSizes(t->shard, &t->sizes));
      t->groups.clear();
      t->groups.reserve(t->sizes.size());
      for (const ShownSize& size : t->sizes) {
        if (size.width == 0 || size.height == 0) return NoSizeRecorded(dataset, t->shard, sized.shown, sized.convert);
        t->groups.push_back(group(size.width, size.height));
      }
      return Status::OK();
    });
  };
  const auto write = [&](ShardSizes* t) {
    SHARDPACK_RETURN_IF_ERROR(t->status);
    add(t->groups);
    samples += t->groups.size();
    return Status::OK();
  };
  SHARDPACK_RETURN_IF_ERROR(RunOrderedPipeline("reading the sample tables", workers, slots, read, work, write));
  if (samples != dataset.samples()) {
    return Status::DataLoss(sized.shown + ": the sample tables list " + std::to_string(samples) +
                            " samples and the manifest " + std::to_string(dataset.samples()) +
                            "; run shardpack verify " + sized.shown);
  }
  return Status::OK();
}

}  // namespace shardpack
