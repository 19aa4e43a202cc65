// The sample table: one text file per shard listing, for every sample, where its bytes lie in the
// shard, their checksum, and what `stat` summarises (label, image format, dimensions).
//
// Format (docs/formats/sample-table.md): a header line, then one tab-separated line per sample:
//   key  offset  size  xxh64  label  format  width  height
// and, in version 2 (datasets packed with a resolution bound, pack --max-side), two more columns:
//   original_width  original_height   (the image's size before pack re-encoded it; 0 0 when it did not)
// offset/size cover the sample's whole byte range in the shard (for tar: its members' headers, data
// and padding), so `verify` can name the sample that holds a damaged byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kSampleTableHeader[] =
    "#shardpack-sample-table-v1\tkey\toffset\tsize\txxh64\tlabel\tformat\twidth\theight\n";
inline constexpr char kSampleTableHeaderV2[] =
    "#shardpack-sample-table-v2\tkey\toffset\tsize\txxh64\tlabel\tformat\twidth\theight\toriginal_width\t"
    "original_height\n";

struct SampleRecord {
  std::string key;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t xxh64 = 0;
  int32_t label = -1;
  ImageFormat format = ImageFormat::kUnknown;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t original_width = 0;  // re-encoded under a resolution bound: its size before; else 0
  uint32_t original_height = 0;
};

// One line, newline included; v2: with the original size (kSampleTableHeaderV2).
std::string FormatSampleRecord(const SampleRecord& record, bool v2 = false);
// Parses a whole table of either version; DataLoss naming the line on any malformed content.
Status ParseSampleTable(std::string_view text, std::vector<SampleRecord>* records);

// Reads the sample table of `shard` in `dir`, checked against the manifest's checksum of it
// (ReadSideFile), and parses it; it must list as many samples as the manifest says. DataLoss naming
// the file (and suggesting `shardpack verify`) otherwise.
Status ReadSampleTable(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<SampleRecord>* records);

}  // namespace shardpack
