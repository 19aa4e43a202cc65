// Which .parquet files a location names, before anything reads them (no Arrow here: this part is
// built without the Parquet library too, so that such a build can say what it cannot read).
//
// A location is a .parquet file, a folder (every .parquet file under it, hidden folders such as
// .cache and .git skipped, sorted by path: the Hub's data/train-00000-of-00008.parquet layout), or
// a glob in its last part ('DIR/data/train-*.parquet'). A folder that holds image files is an image
// tree (pack's input), even with a .parquet file among them. A folder that holds several splits of the
// Hub's layout (train-*, test-*) is refused, naming them: reading them as one dataset would mix a
// test set into training.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

struct ParquetFiles {
  std::string base;                // the folder the names are relative to
  std::vector<std::string> names;  // relative to base, '/'-separated, sorted
  std::string split;               // the split they all belong to ("train"), or ""
};

// NotFound when the location names no .parquet file (it is some other dataset, or none);
// InvalidArgument for several splits, and for a folder past kMaxParquetFiles files.
Status ListParquetFiles(Env* env, const std::string& location, ParquetFiles* files);

// The folder a location's names are relative to: the location when it is a folder, else the
// folder it is in. (A shard names its file relative to this: "data/train-00000-of-00002.parquet".)
std::string ParquetBaseOf(Env* env, const std::string& location);

// The split of a file named in the Hub's layout, "{split}-{i:05d}-of-{n:05d}.parquet" (or
// "{split}-{i:05d}.parquet"): "train" for train-00000-of-00008.parquet; "" for any other name.
std::string ParquetSplitOf(std::string_view file_name);

inline constexpr size_t kMaxParquetFiles = 1000000;

}  // namespace shardpack
