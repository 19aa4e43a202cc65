// Fuzz target: DALI index files ("v1.2 N" then one line of members a sample), as found beside
// shards from other tools. A count or offset may claim anything.
#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/wds/dali_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<shardpack::DaliIndexSample> samples;
  (void)shardpack::ParseDaliIndex(std::string_view(reinterpret_cast<const char*>(data), size), &samples);
  return 0;
}
