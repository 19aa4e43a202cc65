// The LMDB format (format "lmdb", version 1): one LMDB environment in the dataset folder
// (data.mdb, lock.mdb), one record per sample. Normative description: docs/formats/lmdb.md.
//
// Keys: the zero-padded sample index ("000000042"), so keys sort in sample order; the dataset
// metadata lives under kLmdbMetadataKey, which sorts after every sample key.
// Value of a sample (little-endian):
//   bytes 0..3   magic "SPR1", or "SPR2" for a sample with fields
//   bytes 4..7   H: length of the JSON header
//   bytes 8..8+H JSON header {"key", "label", "class", "path", "format", "width", "height", "xxh64"}
//   the rest     SPR1: the encoded image, untouched ("xxh64" is its XXH64). SPR2: the image (its
//                size in the header's "image_size"), then each field's bytes in the order of the
//                header's "fields": [{"name", "size", "xxh64"}], sorted by name.
// A sample without fields is an SPR1 record, as version 1 wrote it; a reader that knows only SPR1
// refuses an SPR2 record by its magic rather than taking the fields for part of the image.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "shardpack/image.h"
#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kLmdbRecordMagic[4] = {'S', 'P', 'R', '1'};
inline constexpr char kLmdbRecordWithFieldsMagic[4] = {'S', 'P', 'R', '2'};
inline constexpr char kLmdbMetadataKey[] = "__shardpack__";
inline constexpr char kLmdbDataFile[] = "data.mdb";
inline constexpr char kLmdbLockFile[] = "lock.mdb";
inline constexpr uint64_t kLmdbInitialMapSize = uint64_t(1) << 30;

// A field of a record: its name and bytes (pointing into the record), and the XXH64 its header
// gives (16 hex digits).
struct LmdbField {
  std::string name;
  std::string_view data;
  std::string xxh64;
};

// Builds a record from its header and image bytes (and its fields: an SPR2 record, whose header
// must then hold "image_size" and "fields", as AddLmdbFieldsHeader writes them).
std::string EncodeLmdbRecord(const nlohmann::json& header, std::string_view image,
                             const std::vector<SampleField>* fields = nullptr);
// Appends the record of `header_json`, `image` and `fields` to `out`.
void AppendLmdbRecord(const std::string& header_json, std::string_view image, const std::vector<SampleField>* fields,
                      std::string* out);
// The header entries of an SPR2 record: "image_size" and "fields" [{"name", "size", "xxh64"}].
void AddLmdbFieldsHeader(std::string_view image, const std::vector<SampleField>& fields, nlohmann::json* header);

// Splits a record; DataLoss when the magic, the header length or the header JSON is wrong, or the
// sizes of an SPR2 record's parts do not add up to it. `image` and the fields point into `record`.
Status ParseLmdbRecord(std::string_view record, nlohmann::json* header, std::string_view* image,
                       std::vector<LmdbField>* fields = nullptr);

// The sample's metadata in a record header: what SampleMetadata wrote (path, size, format, class,
// source), without the record's own entries (key, label, xxh64, image_size, fields), so that it
// equals what a WebDataset shard keeps in the sample's ".json".
nlohmann::json LmdbRecordMetadata(nlohmann::json header);

// A sample record's header fields, typed, as every reader of them wants them.
struct LmdbSample {
  std::string key;   // "key", or the LMDB key when absent
  std::string path;  // "path" (relative to SRC), or the LMDB key when absent
  int32_t label = -1;
  ImageFormat format = ImageFormat::kUnknown;  // from "format" ("jpeg" or "jpg", "png", ...)
  uint32_t width = 0, height = 0;
  uint32_t original_width = 0, original_height = 0;  // re-encoded under pack --max-side; else 0
  int orientation = 1;                               // EXIF, "orientation" (1-8); 1 when absent
  std::string xxh64;                                 // of the image, 16 hex digits; empty when absent
  std::string_view image;                            // points into the record
  std::vector<LmdbField> fields;                     // SPR2 records; empty for SPR1
};

// ParseLmdbRecord, then the fields. `db_key` is the record's LMDB key.
Status ParseLmdbSample(std::string_view record, std::string_view db_key, LmdbSample* sample);

}  // namespace shardpack
