// Verification of one WebDataset shard against its manifest entry, DALI index and sample table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/common/shard_check.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/verify.h"

namespace shardpack {

// Never fails: every problem, including unreadable files, is recorded in `check`.
void VerifyWdsShard(Env* env, const std::string& dir, const Manifest& manifest, const ShardEntry& shard,
                    const VerifyOptions& options, ShardCheck* check);

}  // namespace shardpack
