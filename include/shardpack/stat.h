// stat: a summary of a packed dataset, read from its manifest and sample tables (no shard is read).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shardpack/buckets.h"
#include "shardpack/dataset_format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

struct ClassCount {
  std::string name;
  int32_t label = 0;
  uint64_t samples = 0;
};

// How many samples an aspect-ratio bucket would take (StatOptions::buckets), and how much of them it
// would crop away.
struct BucketCount {
  Bucket bucket;
  uint64_t samples = 0;
  double cropped_share = 0;  // mean over its samples of CroppedShare
  // Its samples enlarged to cover it (CoverScale above 1: a bucket larger than the image adds no
  // detail), and the largest such scale (0: none).
  uint64_t upscaled = 0;
  double max_upscale = 0;
};

// Counts of positive values in logarithmic bins, `steps_per_octave` to each power of two: counts[k]
// holds the values v with floor(log2(v) * steps_per_octave) == first + k, that is those in
// [2^((first+k)/steps), 2^((first+k+1)/steps)). Values of 0 (a size nobody recorded) are counted in
// `zero`. The bins depend on nothing but the values, so that histograms of shards counted apart
// merge exactly, and a reader can recompute any bin from the rule alone (docs/report.md).
struct LogHistogram {
  explicit LogHistogram(int steps = 4) : steps_per_octave(steps) {}
  int steps_per_octave;
  int first = 0;                 // bin index of counts[0]
  std::vector<uint64_t> counts;  // from the lowest bin that holds a value to the highest
  uint64_t zero = 0;
  // The lower edge of counts[k]: 2^((first + k) / steps_per_octave).
  double lower_edge(size_t k) const;
  void Add(double value);
  void Merge(const LogHistogram& other);  // `other` must have the same steps_per_octave
};

// A shard whose size stands out (DatasetStats::odd_shards): under half or over twice the median
// shard's bytes or samples.
struct OddShard {
  uint64_t index = 0;  // in the manifest's order
  std::string name;
  uint64_t samples = 0, bytes = 0;
  std::string why;  // "under half the median shard's bytes (12.0 MB)"
};

struct DatasetStats {
  std::string name;
  // The manifest's generation (each append adds 1; a view's: its base's), which messages about
  // appends and loader states cite.
  uint64_t generation = 0;
  DatasetFormat format = DatasetFormat::kWebDataset;
  uint64_t samples = 0;
  uint64_t shards = 0;
  uint64_t bytes = 0;
  uint64_t skipped = 0;  // inputs skipped at pack time
  // A view (docs/views.md): its base as the view names it; the figures are the view's samples'
  // (shards: the base shards it reads; bytes: their sizes; no skips and no field counts).
  std::string view_base;
  // ... and the samples appends added to its base since the view was made, which it does not select
  // (0: none). Making the view again with its rule takes them; no sample changes sides.
  uint64_t view_base_newer = 0;
  // Bytes one sample occupies in its shard (all members with headers and padding).
  struct Percentiles {
    uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
    double mean = 0;
    bool operator==(const Percentiles& o) const {
      return min == o.min && p50 == o.p50 && p90 == o.p90 && p99 == o.p99 && max == o.max && mean == o.mean;
    }
  };
  Percentiles sample_bytes;
  // The samples' bytes in their shards, summed: a view's own size (its `bytes` are those of the
  // base shards it reads, other samples' included).
  uint64_t sample_bytes_total = 0;
  // Percentiles are exact up to about a million distinct values; past that (sample_bytes of a
  // large dataset) each is within 0.1% below the exact one (min, max and the mean stay exact).
  bool sample_bytes_exact = true;
  Percentiles width;
  Percentiles height;
  // Images pack re-encoded under a resolution bound (pack --max-side, --lossless-as-jpeg), and every
  // image's size before pack (its original size when re-encoded, else the stored one).
  uint64_t reencoded = 0;
  Percentiles original_width;
  Percentiles original_height;
  std::map<std::string, uint64_t> image_formats;  // "jpeg" -> samples
  std::map<std::string, uint64_t> fields;         // "txt" -> samples that have a caption (the manifest's counts)
  std::vector<ClassCount> classes;                // in label order; empty when unlabelled
  uint64_t unlabelled = 0;
  // With StatOptions::buckets: each bucket in the given order, and the samples whose sample table
  // gives no size (shards of other tools), which no bucket takes.
  std::vector<BucketCount> buckets;
  uint64_t unsized = 0;
  // ... and with StatOptions::bucket_choice, the samples in no bucket (what the loader leaves out).
  uint64_t bucket_left_out = 0;

  // Histograms (LogHistogram, 4 bins an octave; aspect 8): width, height and aspect ratio (width /
  // height) as shown (EXIF orientation applied), and sample bytes; the sizes before pack when it
  // re-encoded (`reencoded` > 0; the original of an image pack kept is its stored size); the
  // shards' bytes and samples.
  LogHistogram width_histogram, height_histogram, sample_bytes_histogram;
  LogHistogram aspect_histogram = LogHistogram(8);
  LogHistogram original_width_histogram, original_height_histogram;
  LogHistogram shard_bytes_histogram, shard_samples_histogram;
  // The shards whose bytes or samples stand out (the last shard of a pack, or of each of its
  // partitions, is often small), in shard order, at most kMaxOddShards; odd_shard_count counts all.
  static constexpr size_t kMaxOddShards = 1000;
  std::vector<OddShard> odd_shards;
  uint64_t odd_shard_count = 0;
  // The inputs pack skipped, with its reasons, at most kMaxSkippedListed of them (`skipped`
  // counts all); a view lists none.
  static constexpr size_t kMaxSkippedListed = 1000;
  std::vector<SkippedFile> skipped_files;
};

struct StatOptions {
  Env* env = nullptr;    // nullptr: Env::Default()
  RemoteOptions remote;  // a dataset at a URL: its cache folder, credentials
  // Called after each shard's table is read (shards done, shards): the CLI's progress line.
  std::function<void(uint64_t done, uint64_t total)> on_shard;
  // Sample tables read at once (0 = all cores); the figures do not depend on it.
  int threads = 0;
  // Aspect-ratio buckets (ParseBuckets) to count the samples into, by the sizes in the sample tables
  // as shown (a JPEG its EXIF orientation turns counts turned, from version 3 tables; docs/buckets.md).
  std::vector<Bucket> buckets;
  BucketChoice bucket_choice;  // which images they take, as the loader's (LoaderOptions::bucket_choice)
};

// Describes the dataset at `location` (a folder, or a URL) from its manifest and sample tables.
Status Stat(const std::string& location, const StatOptions& options, DatasetStats* stats);

}  // namespace shardpack
