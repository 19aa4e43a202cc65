// Where each sample's image lies in a WebDataset shard written by any tool (shardpack, webdataset's
// TarWriter, tarp, GNU tar), so that sample i can be read with one pread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/image.h"

namespace shardpack {

struct WdsSampleLocation {
  std::string key;
  int32_t label = -1;  // from the .cls field; -1 without one
  ImageFormat format = ImageFormat::kUnknown;
  uint64_t offset = 0;  // of the image member's data in the shard file
  uint64_t size = 0;
  uint64_t json_offset = 0;  // of the metadata member's data; json_size 0 when there is none
  uint64_t json_size = 0;
  // The sample's other members (caption, annotations, mask), where they are: field name, offset
  // of the data, size. Empty for most datasets, so it costs a sample nothing then.
  struct Field {
    std::string name;
    uint64_t offset = 0, size = 0;
  };
  std::vector<Field> fields;
  // The sample's whole byte range (its members and their headers) and XXH64, as its sample table
  // lists them; size 0 where there is no table (a shard read by path).
  uint64_t sample_offset = 0, sample_size = 0, sample_xxh64 = 0;
};

// The DALI index that belongs to a shard: "<path without .tar>.idx".
std::string DaliIndexPathFor(const std::string& shard_path);

// Indexes the shard at `path`: from its DALI index when one sits beside it (reading each .cls member
// it names), else by scanning the tar's headers, which seeks over the image data. The WebDataset rules
// of formats/wds/wds_naming.h apply; the first image field of a sample is its image. Errors name the
// shard and member: Unsupported for a compressed shard (no random access into gzip), DataLoss for a
// sample without an image, members of one sample that are not adjacent, links, device entries,
// absolute or ".." names, or an index pointing past the end of the shard.
Status IndexWdsShard(Env* env, const std::string& path, std::vector<WdsSampleLocation>* samples);

}  // namespace shardpack
