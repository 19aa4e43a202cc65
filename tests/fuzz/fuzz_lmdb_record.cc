// Fuzz target: one LMDB value (the SPR1 record: magic, header length, JSON header, image bytes),
// split and its header fields taken as every reader takes them.
#include <cstdint>
#include <string_view>

#include "formats/lmdb/lmdb_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardpack::LmdbSample sample;
  (void)shardpack::ParseLmdbSample(std::string_view(reinterpret_cast<const char*>(data), size), "000000000", &sample);
  return 0;
}
