// Thumbnails: a small, fixed sample of a dataset's images, decoded and shrunk, so that a person sees
// what the data is (`shardpack report`, docs/report.md). Reads only the chosen samples' files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

struct ThumbnailOptions {
  Env* env = nullptr;    // nullptr: Env::Default()
  RemoteOptions remote;  // a dataset at a URL
  uint32_t count = 24;   // at most this many (fewer when the dataset has fewer samples)
  uint32_t side = 96;    // each is the centre square of the image, side x side pixels
  uint64_t seed = 0;     // which samples: the same seed and dataset give the same ones
  int quality = 80;      // of the JPEG each is encoded as
};

struct Thumbnail {
  uint64_t index = 0;  // the sample's position in the dataset
  std::string key;
  int32_t label = -1;
  uint32_t width = 0, height = 0;  // of the image as shown (EXIF orientation applied)
  std::string jpeg;                // side x side; empty when the sample could not be read or decoded
  std::string error;               // why not, when `jpeg` is empty
};

// The samples to show of a dataset of `samples`: min(count, samples) distinct positions drawn by a
// seeded generator, in ascending order. A pure function of its arguments.
std::vector<uint64_t> ThumbnailPositions(uint64_t samples, uint32_t count, uint64_t seed);

// Reads the samples at ThumbnailPositions of the dataset at `location` (a folder, a view, or a URL)
// and makes their thumbnails. A sample that cannot be read (a missing shard) or whose image does not
// decode is reported in its Thumbnail's `error`, not as a failure; opening the dataset can fail.
Status MakeThumbnails(const std::string& location, const ThumbnailOptions& options, std::vector<Thumbnail>* out);

}  // namespace shardpack
