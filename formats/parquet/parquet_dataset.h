// A Parquet dataset (a file, a folder or a glob: parquet_files.h) as shardpack reads it in place:
// its files' footers, read once when it is opened (in parallel: 10,000 files in a few seconds),
// one layout for every file, and the manifest the operations take it by. A shard is a row group:
// the unit Parquet compresses and reads together, located as (file, row group, row).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/parquet/parquet_files.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

struct ParquetShard {
  uint32_t file = 0;  // in files.names
  int row_group = 0;
  uint64_t rows = 0;
  uint64_t bytes = 0;  // compressed, as stored
};

struct ParquetDataset {
  std::string location;  // as given
  ParquetFiles files;
  std::vector<ParquetShard> shards;  // files in order, each file's row groups in order
  std::vector<std::string> classes;  // the ClassLabel's names; none for numbers or no label
  bool has_fields = false;           // columns besides the image and the label
  uint64_t samples = 0;
};

// Opens every file's footer. NotFound when the location names no .parquet file; DataLoss naming
// a damaged file; InvalidArgument naming two files whose columns differ.
Status OpenParquetDataset(Env* env, const std::string& location, ParquetDataset* dataset);

// Format parquet, a shard per row group named ParquetShardName, the ClassLabel's names as classes,
// a "json" field on every sample when the files have columns besides the image and label.
Manifest ParquetManifest(const ParquetDataset& dataset);

// "data/train-00000-of-00002.parquet#3": the file (relative to the dataset's base folder) and the
// row group. ParseParquetShardName is its inverse (false for a name it did not make).
std::string ParquetShardName(const std::string& file, int row_group);
bool ParseParquetShardName(std::string_view name, std::string* file, int* row_group);

}  // namespace shardpack
