// The samples of an MDS shard (streaming/base/format/mds/writer.py, encode_joint_shard and
// encode_sample) and what shardpack makes of them.
//
// A raw shard: uint32 n; uint32 offsets[n + 1] (from the file's start; sample i is
// [offsets[i], offsets[i + 1])); the writer's config as JSON; the samples. A sample: a uint32 size
// for each variable-size column, in column order, then every column's bytes in column order. All
// little-endian.
//
// Which column is the image, the label and the rest (MdsLayout): the image is the first column
// (columns are sorted by name) encoded "jpeg", "png" or "pil", else a "bytes" column named as an
// image (image, img, jpg, jpeg, png, webp); the label an integer column named label, labels, class,
// cls, target or y, else the only integer column; every other column becomes a field of the
// sample's JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "formats/mds/mds_index.h"
#include "shardpack/image.h"
#include "shardpack/status.h"

namespace shardpack {

// The bytes before a shard's first possible sample: the count and n + 1 offsets.
inline uint64_t MdsHeaderBytes(uint64_t samples) { return 4 * (samples + 2); }

// A raw shard held in memory (read whole, or decompressed), its header checked once.
class MdsShardView {
 public:
  // The count must be `samples` (what index.json says) and the offsets must lie in the data, in
  // order, after the header. DataLoss naming `path` and what is wrong.
  static Status Open(std::string_view data, uint64_t samples, const std::string& path, MdsShardView* view);
  uint64_t samples() const { return samples_; }
  std::string_view sample(uint64_t i) const;  // i < samples()

 private:
  std::string_view data_;
  uint64_t samples_ = 0;
};

// Whether sample i's range, as its two offsets say, lies in a shard of `raw_bytes` holding
// `samples`: a reader that reads a sample alone (from an uncompressed shard) checks this.
bool MdsSampleRangeValid(uint32_t begin, uint32_t end, uint64_t samples, uint64_t raw_bytes);

struct MdsLayout {
  int image = -1;             // column index
  bool image_is_pil = false;  // raw pixels ("pil": width, height, mode, pixels), else encoded bytes
  int label = -1;             // -1: none; labels are then -1
  std::vector<int> fields;    // every other column
};

// Chooses the columns as described above. InvalidArgument naming the columns when none is an image.
Status ChooseMdsLayout(const std::vector<MdsColumn>& columns, const std::string& where, MdsLayout* layout);

// A sample's column values, views into `sample`. False with *why when its sizes do not add up.
bool SplitMdsSample(std::string_view sample, const std::vector<MdsColumn>& columns,
                    std::vector<std::string_view>* values, std::string* why);

// What shardpack takes from one sample (its values split as above).
struct MdsDecoded {
  std::string_view encoded;  // the image's bytes (not "pil")
  DecodedImage pixels;       // a "pil" image's pixels as RGB
  int32_t label = -1;
  nlohmann::json fields;  // the other columns by name (an object); empty object when none
};

// Fills *out. A "pil" image in mode RGB, RGBA (alpha dropped, as PIL's convert("RGB")) or L (grey
// repeated) becomes RGB pixels of at most max_pixels; other modes are refused naming them.
// A label outside 0 to 2^31 - 1 is refused. Corrupt saying what is wrong (the caller names the
// shard and the sample).
Status DecodeMdsSample(const std::vector<std::string_view>& values, const std::vector<MdsColumn>& columns,
                       const MdsLayout& layout, bool want_fields, uint64_t max_pixels, MdsDecoded* out);

}  // namespace shardpack
