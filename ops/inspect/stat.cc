#include "shardpack/stat.h"

#include <algorithm>
#include <numeric>

#include "ground/sample_table.h"
#include "ops/read/opened_dataset.h"
#include "shardpack/manifest.h"

namespace shardpack {
namespace {

// Nearest-rank percentiles of `values` (sorted in place).
DatasetStats::Percentiles Summarise(std::vector<uint64_t>* values) {
  DatasetStats::Percentiles p;
  if (values->empty()) return p;
  std::sort(values->begin(), values->end());
  auto rank = [&](double q) {
    size_t r = static_cast<size_t>(q * static_cast<double>(values->size()) + 0.999999);
    return (*values)[std::min(values->size() - 1, r == 0 ? 0 : r - 1)];
  };
  p.min = values->front();
  p.max = values->back();
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.mean = static_cast<double>(std::accumulate(values->begin(), values->end(), uint64_t(0))) /
           static_cast<double>(values->size());
  return p;
}

}  // namespace

Status Stat(const std::string& location, const StatOptions& options, DatasetStats* stats) {
  *stats = DatasetStats();
  OpenedDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenDatasetAt(location, options.remote, options.env, &dataset));
  Env* env = dataset.env;  // a URL without a cache folder: through memory
  const std::string& dir = dataset.dir;
  const Manifest& manifest = dataset.manifest;
  const Format* format = dataset.format;
  stats->name = manifest.name;
  stats->format = manifest.format;
  stats->samples = manifest.samples;
  stats->shards = manifest.shards.size();
  stats->bytes = manifest.bytes;
  stats->skipped = manifest.skipped.size();
  stats->fields = FieldCounts(manifest);
  for (size_t i = 0; i < manifest.classes.size(); ++i) {
    stats->classes.push_back({manifest.classes[i], static_cast<int32_t>(i), 0});
  }
  std::vector<uint64_t> sizes, widths, heights, original_widths, original_heights;
  for (const ShardEntry& shard : manifest.shards) {
    std::vector<SampleRecord> records;
    SHARDPACK_RETURN_IF_ERROR(format->ReadSampleRecords(env, dir, shard, &records));
    for (const SampleRecord& r : records) {
      sizes.push_back(r.size);
      widths.push_back(r.width);
      heights.push_back(r.height);
      const bool reencoded = r.original_width > 0;
      stats->reencoded += reencoded ? 1 : 0;
      original_widths.push_back(reencoded ? r.original_width : r.width);
      original_heights.push_back(reencoded ? r.original_height : r.height);
      ++stats->image_formats[ImageFormatName(r.format)];
      if (r.label >= 0 && static_cast<size_t>(r.label) < stats->classes.size()) {
        ++stats->classes[r.label].samples;
      } else {
        ++stats->unlabelled;
      }
    }
  }
  stats->sample_bytes = Summarise(&sizes);
  stats->width = Summarise(&widths);
  stats->height = Summarise(&heights);
  stats->original_width = Summarise(&original_widths);
  stats->original_height = Summarise(&original_heights);
  return Status::OK();
}

}  // namespace shardpack
