// Fuzz target: one LMDB value (the SPR1 record: magic, header length, JSON header, image bytes).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "formats/lmdb/lmdb_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json header;
  std::string_view image;
  (void)shardpack::ParseLmdbRecord(std::string_view(reinterpret_cast<const char*>(data), size), &header, &image);
  return 0;
}
