// ShardCheck: what a format's verifier found in one shard (or, for LMDB, the one environment).
#pragma once

#include <cstdint>
#include <vector>

#include "shardpack/verify.h"

namespace shardpack {

struct ShardCheck {
  uint64_t samples = 0;  // samples found
  uint64_t bytes = 0;    // bytes read
  uint64_t images_decoded = 0;
  std::vector<VerifyProblem> problems;
};

}  // namespace shardpack
