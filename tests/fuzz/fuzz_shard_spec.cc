// Fuzz target: shard lists with brace ranges ("train-{000000..000127}.tar"), which a typo can make
// enormous; expansion is capped. The caps are lowered here (the logic is the same) so that the many
// large expansions a fuzzer tries stay well inside its memory limit under ASan's quarantine.
#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/shard_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> paths;
  (void)shardpack::ExpandShardSpec(std::string(reinterpret_cast<const char*>(data), size), &paths, 10000, 4 << 20);
  return 0;
}
