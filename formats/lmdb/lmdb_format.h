// The LMDB format (format "lmdb", version 1): one LMDB environment in the dataset folder
// (data.mdb, lock.mdb), one record per sample. Normative description: docs/formats/lmdb.md.
//
// Keys: the zero-padded sample index ("000000042"), so keys sort in sample order; the dataset
// metadata lives under kLmdbMetadataKey, which sorts after every sample key.
// Value of a sample (little-endian):
//   bytes 0..3   magic "SPR1"
//   bytes 4..7   H: length of the JSON header
//   bytes 8..8+H JSON header {"key", "label", "class", "path", "format", "width", "height", "xxh64"}
//   the rest     the encoded image, untouched ("xxh64" is its XXH64)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "shardpack/image.h"
#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kLmdbRecordMagic[4] = {'S', 'P', 'R', '1'};
inline constexpr char kLmdbMetadataKey[] = "__shardpack__";
inline constexpr char kLmdbDataFile[] = "data.mdb";
inline constexpr char kLmdbLockFile[] = "lock.mdb";
inline constexpr uint64_t kLmdbInitialMapSize = uint64_t(1) << 30;

// Builds a record from its header and image bytes.
std::string EncodeLmdbRecord(const nlohmann::json& header, std::string_view image);
// Appends the record of `header_json` and `image` to `out`.
void AppendLmdbRecord(const std::string& header_json, std::string_view image, std::string* out);

// Splits a record; DataLoss when the magic, the header length or the header JSON is wrong.
// `image` points into `record`.
Status ParseLmdbRecord(std::string_view record, nlohmann::json* header, std::string_view* image);

// A sample record's header fields, typed, as every reader of them wants them.
struct LmdbSample {
  std::string key;   // "key", or the LMDB key when absent
  std::string path;  // "path" (relative to SRC), or the LMDB key when absent
  int32_t label = -1;
  ImageFormat format = ImageFormat::kUnknown;  // from "format" ("jpeg" or "jpg", "png", ...)
  uint32_t width = 0, height = 0;
  std::string xxh64;       // of the image, 16 hex digits; empty when absent
  std::string_view image;  // points into the record
};

// ParseLmdbRecord, then the fields. `db_key` is the record's LMDB key.
Status ParseLmdbSample(std::string_view record, std::string_view db_key, LmdbSample* sample);

}  // namespace shardpack
