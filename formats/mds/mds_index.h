// MosaicML Streaming's MDS datasets (mosaicml-streaming 0.13, streaming/base/format/): the folder's
// index.json, as this file parses it. Normative description: docs/formats/mds.md.
//
// index.json is {"version": 2, "shards": [...]}; each shard entry names its file ("raw_data":
// {"basename", "bytes", "hashes"}, and "zip_data" likewise when the writer compressed it, whole, with
// "compression" such as "zstd:7"), its sample count, and its columns: "column_names" (sorted),
// "column_encodings" ("jpeg", "png", "pil", "bytes", "int", "str", "json", "ndarray:uint8:3,4", ...)
// and "column_sizes" (bytes for fixed-size encodings, null for variable ones).
//
// Everything in it is checked before a reader trusts it: file names stay in the folder, sizes are
// within what a shard's 32-bit offsets can address, every shard has the same columns (one writer
// wrote them; a reader decodes every sample by one layout).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kMdsIndexFileName[] = "index.json";

struct MdsColumn {
  std::string name;
  std::string encoding;  // as written, e.g. "jpeg", "ndarray:uint8"
  uint32_t size = 0;     // fixed size in bytes; 0: variable (the sample's header gives it)
};

struct MdsFile {
  std::string basename;  // in the dataset folder
  uint64_t bytes = 0;
  std::map<std::string, std::string> hashes;  // algorithm ("xxh64", "sha1", ...) -> hex digest
  // Whether the index gives `bytes` (a check on the file); LitData's does not for a compressed
  // chunk's file, whose size is then what the folder holds.
  bool size_known = true;
};

// How a shard's file holds its raw bytes.
enum class MdsCodec {
  kNone,
  kZstd,               // the whole file one zstd stream (MDS's zip_data; LitData's "chunk" level)
  kLitDataFramedZstd,  // LitData's "batch" level: a header, then zstd frames of items (litdata_framed.h)
};

struct MdsShardInfo {
  uint64_t samples = 0;
  MdsFile raw;              // the shard's bytes as parsed
  bool compressed = false;  // then `zip` is the file on disk, `raw` its decompressed contents
  MdsFile zip;
  std::string compression;  // "zstd:7", ...; empty when not compressed
  MdsCodec codec = MdsCodec::kNone;
  const MdsFile& stored() const { return compressed ? zip : raw; }
};

struct MdsIndex {
  std::vector<MdsColumn> columns;  // the same in every shard
  std::vector<MdsShardInfo> shards;
  uint64_t samples = 0;
};

// The largest raw shard: its offsets are uint32.
inline constexpr uint64_t kMaxMdsShardBytes = uint64_t(1) << 32;

// A file name from an index: a plain name in the dataset folder, nothing that climbs out of it.
bool SafeBasename(const std::string& name);

// Whether `text` (an index.json) is an MDS index: a JSON object with "version" and "shards". Says
// nothing of its validity (ParseMdsIndex does); LitData's index.json has "chunks" and "config".
bool LooksLikeMdsIndex(std::string_view text);

// Parses index.json (`path` names it in messages). DataLoss naming the shard and the field when it
// is malformed; Unsupported naming the fix for what this reader does not read (a version other
// than 2, a format other than "mds", a compression other than zstd).
Status ParseMdsIndex(std::string_view text, const std::string& path, MdsIndex* index);

}  // namespace shardpack
