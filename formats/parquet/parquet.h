// Parquet datasets (Hugging Face's Hub layout, or any Parquet files with an image column) in the
// table of formats (formats/registry/): read in place and converted, never written
// (docs/formats/parquet.md). A location is one when it names .parquet files (parquet_files.h) and
// holds no manifest.json: OpenParquetManifest makes the manifest the operations take it by.
//
// This header is Arrow-free: the registry includes it in builds without the Parquet library too
// (SHARDPACK_HAVE_PARQUET unset), where OpenParquetManifest says what is missing.
#pragma once

#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

#ifdef SHARDPACK_HAVE_PARQUET
const Format& ParquetFormat();
#endif

// The manifest of the Parquet dataset at `location` (ParquetManifest) and its format. NotFound when
// it names no .parquet file; in a build without the Parquet library, Unsupported saying so.
Status OpenParquetManifest(Env* env, const std::string& location, Manifest* manifest, const Format** format);

}  // namespace shardpack
