// The sample table: one text file per shard listing, for every sample, where its bytes lie in the
// shard, their checksum, and what `stat` summarises (label, image format, dimensions).
//
// Format (docs/formats/sample-table.md): a header line, then one tab-separated line per sample:
//   key  offset  size  xxh64  label  format  width  height
// and, in version 2 (datasets packed with a resolution bound, pack --max-side), two more columns:
//   original_width  original_height   (the image's size before pack re-encoded it; 0 0 when it did not)
// and, in version 3 (a shard with a JPEG its EXIF orientation turns or mirrors), one more:
//   orientation   (EXIF 1-8; 1 for every other image)
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
inline constexpr char kSampleTableHeaderV3[] =
    "#shardpack-sample-table-v3\tkey\toffset\tsize\txxh64\tlabel\tformat\twidth\theight\toriginal_width\t"
    "original_height\torientation\n";

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
  // The EXIF orientation of a JPEG as stored (1-8): 5 to 8 turn it a quarter, so that it is shown
  // height x width. 1 for every other image, and in tables before version 3.
  uint8_t orientation = 1;
  uint32_t shown_width() const { return orientation >= 5 ? height : width; }
  uint32_t shown_height() const { return orientation >= 5 ? width : height; }
};

// One line, newline included, with the columns of table version `version` (1, 2 or 3).
std::string FormatSampleRecord(const SampleRecord& record, int version = 1);
// A whole table, header included, of the lowest version that holds the records: 3 when one of them
// has an orientation other than 1, else 2 with `original_sizes` (pack --max-side), else 1.
std::string FormatSampleTable(const std::vector<SampleRecord>& records, bool original_sizes);
// Parses a whole table of either version; DataLoss naming the line on any malformed content.
Status ParseSampleTable(std::string_view text, std::vector<SampleRecord>* records);

// An image's size as shown (EXIF orientation applied): what buckets and token budgets group by.
struct ShownSize {
  uint32_t width = 0;
  uint32_t height = 0;
};
// The shown sizes of a whole table of any version, in its order. Only the columns they need are
// parsed (a loader with buckets reads every table of the dataset at open, 100,000 of them at a
// billion samples): a line with the wrong number of columns or a malformed width, height or
// orientation is DataLoss naming the line, as ParseSampleTable says it; the other columns are not
// checked here (ReadSideFile checks the whole table against the manifest's checksum).
Status ParseShownSizes(std::string_view text, std::vector<ShownSize>* sizes);

// A table a line at a time (a reader that reads the line of the sample asked for, LineFile): the
// version its header line (without its newline) names, 0 for none; and one sample's line (without
// its newline) of that version, false when malformed.
int SampleTableVersion(std::string_view header_line);
bool ParseSampleRecord(std::string_view line, int version, SampleRecord* record);

// Reads the sample table of `shard` in `dir`, checked against the manifest's checksum of it
// (ReadSideFile), and parses it; it must list as many samples as the manifest says. DataLoss naming
// the file (and suggesting `shardpack verify`) otherwise.
Status ReadSampleTable(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<SampleRecord>* records);
// ReadSampleTable for the shown sizes alone (ParseShownSizes), with the same checks and messages.
Status ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<ShownSize>* sizes);

}  // namespace shardpack
