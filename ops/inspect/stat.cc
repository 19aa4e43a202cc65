#include "shardpack/stat.h"

#include "ground/sample_table.h"
#include "ops/inspect/value_counts.h"
#include "ops/read/opened_dataset.h"
#include "shardpack/manifest.h"

namespace shardpack {
namespace {

// Adds `r` to the bucket its size as shown goes to (its share cropped summed, for the mean), or to unsized.
void CountInBucket(const SampleRecord& r, const std::vector<Bucket>& buckets, DatasetStats* stats) {
  if (r.width == 0 || r.height == 0) {
    ++stats->unsized;
    return;
  }
  // As shown: a JPEG its EXIF orientation turns a quarter is height x width on screen.
  BucketCount& b = stats->buckets[NearestBucket(buckets, r.shown_width(), r.shown_height())];
  ++b.samples;
  b.cropped_share += CroppedShare(b.bucket, r.shown_width(), r.shown_height());
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
  // One shard's table at a time: memory in the distinct values (value_counts.h), not the samples.
  ValueCounts sizes, widths, heights, original_widths, original_heights;
  for (const Bucket& b : options.buckets) stats->buckets.push_back({b, 0, 0});
  for (size_t i = 0; i < manifest.shards.size(); ++i) {
    std::vector<SampleRecord> records;
    SHARDPACK_RETURN_IF_ERROR(format->ReadSampleRecords(env, dir, manifest.shards[i], &records));
    if (options.on_shard) options.on_shard(i + 1, manifest.shards.size());
    for (const SampleRecord& r : records) {
      sizes.Add(r.size);
      widths.Add(r.width);
      heights.Add(r.height);
      const bool reencoded = r.original_width > 0;
      stats->reencoded += reencoded ? 1 : 0;
      original_widths.Add(reencoded ? r.original_width : r.width);
      original_heights.Add(reencoded ? r.original_height : r.height);
      ++stats->image_formats[ImageFormatName(r.format)];
      if (!options.buckets.empty()) CountInBucket(r, options.buckets, stats);
      if (r.label >= 0 && static_cast<size_t>(r.label) < stats->classes.size()) {
        ++stats->classes[r.label].samples;
      } else {
        ++stats->unlabelled;
      }
    }
  }
  stats->sample_bytes = sizes.Summary();
  stats->sample_bytes_exact = sizes.exact();
  stats->width = widths.Summary();
  stats->height = heights.Summary();
  stats->original_width = original_widths.Summary();
  stats->original_height = original_heights.Summary();
  for (BucketCount& b : stats->buckets) {
    if (b.samples > 0) b.cropped_share /= double(b.samples);  // the sum of the shares, until now
  }
  return Status::OK();
}

}  // namespace shardpack
