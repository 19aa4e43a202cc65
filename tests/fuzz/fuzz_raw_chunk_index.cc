// Fuzz target: the chunk index of a compressed raw shard ("<stem>.chunks.npy"), which the raw
// reader takes frame positions from. The first 8 bytes are the shard's size, the rest the file;
// every offset accepted must lie inside the shard, in order.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "formats/raw/raw_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint64_t shard_bytes = 0;
  std::memcpy(&shard_bytes, data, 8);
  std::vector<int64_t> offsets;
  const std::string_view npy(reinterpret_cast<const char*>(data) + 8, size - 8);
  if (shardpack::ParseRawChunkIndex(npy, shard_bytes, &offsets).ok()) {
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (offsets[i] < 0 || uint64_t(offsets[i]) > shard_bytes || (i > 0 && offsets[i] < offsets[i - 1])) std::abort();
    }
  }
  return 0;
}
