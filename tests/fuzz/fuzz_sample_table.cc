// Fuzz target: sample tables (".samples.tsv", one line of key, offset, size, checksum, label,
// image format and dimensions a sample), as a damaged dataset may hold them.
#include <cstdint>
#include <string_view>
#include <vector>

#include "ground/sample_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<shardpack::SampleRecord> records;
  (void)shardpack::ParseSampleTable(std::string_view(reinterpret_cast<const char*>(data), size), &records);
  return 0;
}
