// The on-disk formats a dataset can be packed into, as values instead of strings. Their names
// ("wds", "lmdb", "raw") are what --format takes and what manifest.json's "format" field holds;
// what each format does lives in formats/<name>/, listed in formats/registry/.
#pragma once

#include <string>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

enum class DatasetFormat {
  kWebDataset,  // "wds": WebDataset tar shards with DALI indexes (docs/formats/wds.md)
  kLmdb,        // "lmdb": one LMDB environment (docs/formats/lmdb.md)
  kRaw,         // "raw": pre-decoded pixels in .npy shards (docs/formats/raw.md)
  kMds,         // "mds": MosaicML Streaming's shards, read in place and converted, never written (docs/formats/mds.md)
  kLitData,     // "litdata": LitData's optimized chunks, the same (docs/formats/litdata.md)
  kParquet,     // "parquet": Parquet files (Hugging Face's Hub layout), the same (docs/formats/parquet.md)
};

// "wds", "lmdb", "raw", "mds", "litdata" or "parquet"; "?" for a value outside the enum.
std::string_view DatasetFormatName(DatasetFormat format);

// The written format named `name`; InvalidArgument listing the known names when it is none of them
// (and saying so when it names a format shardpack only reads, "mds").
Status ParseDatasetFormat(std::string_view name, DatasetFormat* format);

// "wds, lmdb or raw": every written format's name, in the order above, for messages and help texts.
std::string DatasetFormatNames(std::string_view last_separator = " or ");

// How the raw format stores pixels (docs/formats/raw.md); --compress and the manifest's "compress"
// option name it "none" or "zstd".
enum class RawCompression {
  kNone,  // the pixels back to back after the .npy header
  kZstd,  // zstd-compressed chunks of images, with a chunk index
};

std::string_view RawCompressionName(RawCompression compression);
// InvalidArgument naming the known values when `name` is neither.
Status ParseRawCompression(std::string_view name, RawCompression* compression);

}  // namespace shardpack
