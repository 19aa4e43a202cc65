// Shard lists as WebDataset users write them.
//
//   "train-{000000..000127}.tar"      128 paths, numbers zero-padded to the width written
//   "{a,b}/part-{0..3}.tar"           alternatives, and several braces multiply out
//   "x.tar::y-{0..1}.tar"             "::" joins specs, as in webdataset's ShardList
// Ranges may count down ("{9..7}"). No other shell syntax (globs, variables) is interpreted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

// Expands `spec` into shard paths, in the order written. InvalidArgument naming the problem for an
// unmatched brace, a range whose ends are not both numbers, an empty result, or more than
// max_paths paths or max_bytes of them (a typo such as "{0..99999999}" must not exhaust memory;
// 100,000 shards of 100-byte paths are 10 MB).
Status ExpandShardSpec(const std::string& spec, std::vector<std::string>* paths, size_t max_paths = 10'000'000,
                       uint64_t max_bytes = uint64_t(64) << 20);

// True when `path` names shards rather than a dataset folder: it holds a brace or "::", or ends in
// ".tar".
bool LooksLikeShardSpec(const std::string& path);

}  // namespace shardpack
