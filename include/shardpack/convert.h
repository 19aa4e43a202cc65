// convert: writes an existing dataset in another format through the pack pipeline.
#pragma once

#include <string>

#include "shardpack/pack.h"

namespace shardpack {

// `in` is a shardpack dataset folder (its manifest names the format), a folder of WebDataset shards
// from any tool (*.tar, *.tar.gz, *.tgz, in name order), or one such shard file. Labels, keys and
// metadata carry over; `options` choose the output exactly as for Pack (list_file, shuffle and
// path_keys do not apply). Raw datasets hold only decoded pixels and cannot be converted.
Status Convert(const std::string& in, const std::string& out, const PackOptions& options, PackResult* result);

}  // namespace shardpack
