// Fuzz target: the .npy header of a raw shard or side file. A shape may claim terabytes.
#include <cstdint>
#include <string_view>

#include "formats/raw/raw_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardpack::NpyInfo info;
  (void)shardpack::ParseNpyHeader(std::string_view(reinterpret_cast<const char*>(data), size), &info);
  return 0;
}
