// Verification of one raw shard against its manifest entry, sample table and side files.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "formats/common/shard_check.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/verify.h"

namespace shardpack {

// pack_options: the manifest's "options" (crop, keep_size). Never fails: problems go into `check`.
void VerifyRawShard(Env* env, const std::string& dir, const ShardEntry& shard, const nlohmann::json& pack_options,
                    ShardCheck* check);

}  // namespace shardpack
