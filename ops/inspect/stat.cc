#include "shardpack/stat.h"

#include <algorithm>

#include "ground/ordered_pipeline.h"
#include "ground/sample_table.h"
#include "ground/status_of_call.h"
#include "ground/worker_threads.h"
#include "ops/inspect/value_counts.h"
#include "ops/read/opened_dataset.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "storage/location.h"

namespace shardpack {
namespace {

// What one shard's sample table adds to the statistics: counted on a thread of its own, then added
// to the dataset's in shard order (ValueCounts::Merge), so that the figures do not depend on the
// thread count.
struct ShardTally {
  size_t shard = 0;
  Status status;
  ValueCounts sizes, widths, heights, original_widths, original_heights;
  uint64_t reencoded = 0, unlabelled = 0, unsized = 0, sample_bytes_total = 0, bucket_left_out = 0;
  std::map<std::string, uint64_t> image_formats;
  std::vector<uint64_t> class_samples;  // by label
  std::vector<BucketCount> buckets;     // cropped_share: the sum of the shares, until the end
  // Shards of another tool (no class names): samples by label, and by field.
  std::map<int32_t, uint64_t> numbered_labels;
  std::map<std::string, uint64_t> fields;
  LogHistogram width_histogram, height_histogram, sample_bytes_histogram;
  LogHistogram aspect_histogram = LogHistogram(8);
  LogHistogram original_width_histogram, original_height_histogram;
};

// Adds `r` to the bucket its size as shown goes to (its share cropped summed, for the mean), or to unsized.
void CountInBucket(const SampleRecord& r, const BucketChooser& choose, ShardTally* tally) {
  if (r.width == 0 || r.height == 0) {
    ++tally->unsized;
    return;
  }
  // As shown: a JPEG its EXIF orientation turns a quarter is height x width on screen.
  const size_t bucket = choose(r.shown_width(), r.shown_height());
  if (bucket == BucketChooser::kNoBucket) {
    ++tally->bucket_left_out;
    return;
  }
  BucketCount& b = tally->buckets[bucket];
  ++b.samples;
  b.cropped_share += CroppedShare(b.bucket, r.shown_width(), r.shown_height());
  const double scale = CoverScale(b.bucket, r.shown_width(), r.shown_height());
  if (scale > 1) {
    ++b.upscaled;
    b.max_upscale = std::max(b.max_upscale, scale);
  }
}

// numbered_classes: labels name no class (shards of another tool): each is counted as its number.
void CountShard(const std::vector<SampleRecord>& records, const std::vector<Bucket>& buckets,
                const BucketChoice& choice, bool numbered_classes, ShardTally* t) {
  const BucketChooser choose(buckets, choice);
  for (const SampleRecord& r : records) {
    t->sizes.Add(r.size);
    t->widths.Add(r.width);
    t->heights.Add(r.height);
    const bool reencoded = r.original_width > 0;
    t->reencoded += reencoded ? 1 : 0;
    t->sample_bytes_total += r.size;
    t->original_widths.Add(reencoded ? r.original_width : r.width);
    t->original_heights.Add(reencoded ? r.original_height : r.height);
    ++t->image_formats[ImageFormatName(r.format)];
    t->width_histogram.Add(r.shown_width());
    t->height_histogram.Add(r.shown_height());
    t->aspect_histogram.Add(r.shown_height() > 0 ? double(r.shown_width()) / r.shown_height() : 0);
    t->sample_bytes_histogram.Add(double(r.size));
    // Before pack, the image was shown at its original size turned as the stored one is.
    const uint32_t ow = reencoded ? r.original_width : r.width, oh = reencoded ? r.original_height : r.height;
    t->original_width_histogram.Add(r.orientation >= 5 ? oh : ow);
    t->original_height_histogram.Add(r.orientation >= 5 ? ow : oh);
    if (!buckets.empty()) CountInBucket(r, choose, t);
    if (r.label >= 0 && static_cast<size_t>(r.label) < t->class_samples.size()) {
      ++t->class_samples[r.label];
    } else if (r.label >= 0 && numbered_classes) {
      ++t->numbered_labels[r.label];
    } else {
      ++t->unlabelled;
    }
  }
}

uint64_t Median(std::vector<uint64_t> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// Why a shard of `samples` and `bytes` stands out against the median shard, or "" when it does not.
// last: the dataset's last shard, which holds what was left when the others were full and is
// small in nearly every dataset: only too large is odd for it.
std::string OddShardReason(uint64_t samples, uint64_t bytes, uint64_t median_samples, uint64_t median_bytes,
                           bool last) {
  if (2 * bytes < median_bytes && !last) {
    return "under half the median shard's bytes (" + std::to_string(median_bytes) + ")";
  }
  if (bytes > 2 * median_bytes) return "over twice the median shard's bytes (" + std::to_string(median_bytes) + ")";
  if (2 * samples < median_samples && !last) {
    return "under half the median shard's samples (" + std::to_string(median_samples) + ")";
  }
  if (samples > 2 * median_samples) {
    return "over twice the median shard's samples (" + std::to_string(median_samples) + ")";
  }
  return "";
}

// Shard `shard` of shards of another tool, as sample-table records: every sample read (through
// `reader`, which opened them), its image's header probed; its size the bytes of its members, without
// the tar's headers. Its fields counted into *fields.
// `first`: the shard's first sample.
Status ForeignShardRecords(const DatasetReader& reader, size_t shard, uint64_t first,
                           std::vector<SampleRecord>* records, std::map<std::string, uint64_t>* fields) {
  const ShardTable& table = reader.manifest().shards;
  records->clear();
  ReadSample sample;
  std::vector<std::string> names;
  std::string data;
  for (uint64_t index = first; index < first + table.samples(shard); ++index) {
    SHARDPACK_RETURN_IF_ERROR(reader.Read(index, &sample));
    SHARDPACK_RETURN_IF_ERROR(reader.ReadFieldNames(index, &names));
    SampleRecord r;
    r.key = sample.key;
    r.label = sample.label;
    r.size = sample.encoded.size();
    ImageInfo info;
    SHARDPACK_RETURN_IF_ERROR(
        ProbeImage(sample.encoded, &info).WithPrefix(std::string(table.file(shard)) + ": sample " + sample.key + ": "));
    r.format = info.format, r.width = info.width, r.height = info.height;
    if (info.format == ImageFormat::kJpeg) r.orientation = uint8_t(JpegExifOrientation(sample.encoded));
    for (const std::string& name : names) {
      bool present = false;
      SHARDPACK_RETURN_IF_ERROR(reader.ReadField(index, name, &data, &present));
      r.size += data.size();
      ++(*fields)[name];
    }
    records->push_back(std::move(r));
  }
  return Status::OK();
}

// The shards' histograms and odd shards, from the manifest alone (a view: its selected samples of
// each base shard it reads, and that shard's bytes).
void CountShards(const OpenedDataset& dataset, DatasetStats* stats) {
  const Manifest& manifest = dataset.manifest;
  std::vector<uint64_t> samples, bytes, index;
  if (dataset.view == nullptr) {
    for (const ShardEntry& s : manifest.shards) {
      index.push_back(index.size());
      samples.push_back(s.samples);
      bytes.push_back(s.bytes);
    }
  } else {
    for (const ViewShard& s : dataset.view->manifest.shards) {
      index.push_back(s.base_shard);
      samples.push_back(s.samples);
      bytes.push_back(manifest.shards[s.base_shard].bytes);
    }
  }
  const uint64_t median_samples = Median(samples), median_bytes = Median(bytes);
  for (size_t i = 0; i < samples.size(); ++i) {
    stats->shard_bytes_histogram.Add(double(bytes[i]));
    stats->shard_samples_histogram.Add(double(samples[i]));
    const bool last = index[i] + 1 == manifest.shards.size();  // (a view's: the base's last)
    std::string why = OddShardReason(samples[i], bytes[i], median_samples, median_bytes, last);
    if (why.empty()) continue;
    ++stats->odd_shard_count;
    if (stats->odd_shards.size() < DatasetStats::kMaxOddShards) {
      stats->odd_shards.push_back({index[i], manifest.shards[index[i]].file, samples[i], bytes[i], std::move(why)});
    }
  }
}

// Shards of another tool (`paths`), opened by a reader, which indexes them, as a dataset without
// class names whose manifest lists them as they are (their files' sizes, compressed or not).
Status OpenForeignShards(const std::vector<std::string>& paths, Env* env, const RemoteOptions& remote,
                         std::unique_ptr<DatasetReader>* reader, OpenedDataset* dataset) {
  SHARDPACK_RETURN_IF_ERROR(DatasetReader::OpenShards(paths, env, reader, remote));
  Manifest& m = dataset->manifest;
  m.name = (*reader)->manifest().name;
  m.format = DatasetFormat::kWebDataset;
  m.samples = (*reader)->size();
  for (size_t i = 0; i < paths.size(); ++i) {
    ShardEntry e;
    e.file = paths[i];
    e.samples = (*reader)->manifest().shards.samples(i);
    SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(paths[i], &e.bytes));
    m.bytes += e.bytes;
    m.shards.push_back(std::move(e));
  }
  dataset->env = env;
  return Status::OK();
}

}  // namespace

Status Stat(const std::string& location, const StatOptions& options, DatasetStats* stats) {
  *stats = DatasetStats();
  Env* env = options.env != nullptr ? options.env : Env::Default();
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  std::vector<std::string> foreign_paths;
  SHARDPACK_RETURN_IF_ERROR(FindForeignShards(parsed, options.remote, env, &foreign_paths));
  OpenedDataset dataset;
  std::unique_ptr<DatasetReader> foreign;  // shards of another tool: what reads their samples
  std::vector<uint64_t> foreign_first;     // ... and where each shard's first sample is
  if (!foreign_paths.empty()) {
    SHARDPACK_RETURN_IF_ERROR(OpenForeignShards(foreign_paths, env, options.remote, &foreign, &dataset));
    uint64_t first = 0;
    for (const ShardEntry& e : dataset.manifest.shards) {
      foreign_first.push_back(first);
      first += e.samples;
    }
  } else {
    SHARDPACK_RETURN_IF_ERROR(OpenDataset(parsed, options.remote, env, &dataset));
  }
  const Manifest& manifest = dataset.manifest;
  stats->format = manifest.format;
  stats->generation = manifest.generation;
  stats->samples = dataset.samples();
  stats->shards = dataset.shard_count();
  if (dataset.view == nullptr) {
    stats->name = manifest.name;
    stats->bytes = manifest.bytes;
    stats->skipped = manifest.skipped.size();
    stats->fields = FieldCounts(manifest);
    const size_t listed = std::min(manifest.skipped.size(), DatasetStats::kMaxSkippedListed);
    stats->skipped_files.assign(manifest.skipped.begin(), manifest.skipped.begin() + listed);
  } else {
    // A view: its selected samples of the base shards it reads (bytes: those shards' sizes). Which
    // of them have a field would take each sample's files: a view's stat lists no field counts.
    stats->name = dataset.view->manifest.name;
    stats->view_base = dataset.view->manifest.base;
    stats->view_base_newer = dataset.view_base_newer;
    for (const ViewShard& s : dataset.view->manifest.shards) stats->bytes += manifest.shards[s.base_shard].bytes;
  }
  CountShards(dataset, stats);
  for (size_t i = 0; i < dataset.classes().size(); ++i) {
    stats->classes.push_back({dataset.classes()[i], static_cast<int32_t>(i), 0});
  }
  for (const Bucket& b : options.buckets) stats->buckets.push_back({b, 0, 0});
  // The shards' tables are read and counted on every core, a few in flight per thread: memory in
  // the distinct values of those few (value_counts.h), not in the samples. 100,000 tables took
  // 288 s on one core.
  ValueCounts sizes, widths, heights, original_widths, original_heights;
  std::map<int32_t, uint64_t> numbered_labels;  // shards of another tool: samples by label
  // A shard's tally starts from these (the workers never read `stats`, which add writes).
  const size_t class_count = stats->classes.size();
  const std::vector<BucketCount> no_buckets = stats->buckets;
  const int threads = WorkerThreads(options.threads);
  std::vector<ShardTally> slots(size_t(2 * threads));
  size_t next = 0;
  const auto read = [&](ShardTally* t, bool* done) {
    *done = next == dataset.shard_count();
    if (!*done) t->shard = next++;
    return Status::OK();
  };
  const auto count = [&](ShardTally* t) {
    const size_t shard = t->shard;
    *t = ShardTally();
    t->shard = shard;
    t->class_samples.assign(class_count, 0);
    t->buckets = no_buckets;
    std::vector<SampleRecord> records;
    t->status = StatusOfCall("reading a sample table", [&] {
      return foreign != nullptr ? ForeignShardRecords(*foreign, shard, foreign_first[shard], &records, &t->fields)
                                : dataset.ReadSampleRecords(shard, &records);
    });
    if (t->status.ok()) {
      CountShard(records, options.buckets, options.bucket_choice, foreign != nullptr || dataset.foreign_index, t);
    }
  };
  const auto add = [&](ShardTally* t) {
    SHARDPACK_RETURN_IF_ERROR(t->status);
    sizes.Merge(t->sizes);
    widths.Merge(t->widths);
    heights.Merge(t->heights);
    original_widths.Merge(t->original_widths);
    original_heights.Merge(t->original_heights);
    stats->reencoded += t->reencoded;
    stats->sample_bytes_total += t->sample_bytes_total;
    stats->unlabelled += t->unlabelled;
    stats->unsized += t->unsized;
    stats->bucket_left_out += t->bucket_left_out;
    for (const auto& [name, n] : t->image_formats) stats->image_formats[name] += n;
    for (size_t c = 0; c < t->class_samples.size(); ++c) stats->classes[c].samples += t->class_samples[c];
    for (const auto& [label, n] : t->numbered_labels) numbered_labels[label] += n;
    for (const auto& [name, n] : t->fields) stats->fields[name] += n;
    stats->width_histogram.Merge(t->width_histogram);
    stats->height_histogram.Merge(t->height_histogram);
    stats->aspect_histogram.Merge(t->aspect_histogram);
    stats->sample_bytes_histogram.Merge(t->sample_bytes_histogram);
    stats->original_width_histogram.Merge(t->original_width_histogram);
    stats->original_height_histogram.Merge(t->original_height_histogram);
    for (size_t b = 0; b < t->buckets.size(); ++b) {
      stats->buckets[b].samples += t->buckets[b].samples;
      stats->buckets[b].cropped_share += t->buckets[b].cropped_share;
      stats->buckets[b].upscaled += t->buckets[b].upscaled;
      stats->buckets[b].max_upscale = std::max(stats->buckets[b].max_upscale, t->buckets[b].max_upscale);
    }
    if (options.on_shard) options.on_shard(t->shard + 1, dataset.shard_count());
    return Status::OK();
  };
  SHARDPACK_RETURN_IF_ERROR(RunOrderedPipeline("stat", threads, slots, read, count, add));
  for (const auto& [label, n] : numbered_labels) stats->classes.push_back({std::to_string(label), label, n});
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
