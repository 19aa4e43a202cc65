// Fuzz target: tar shards from anywhere. Walks every member through TarShardReader (libarchive,
// behind our read and skip callbacks), and indexes the shard as the random-access reader does.
// Members claiming huge sizes must be refused, never allocated.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/wds/tar_shard_reader.h"
#include "formats/wds/wds_shard_index.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardpack::fuzz::MemoryEnv env;
  env.Put("shard.tar", std::string(reinterpret_cast<const char*>(data), size));
  std::unique_ptr<shardpack::TarShardReader> reader;
  if (shardpack::TarShardReader::Open(&env, "shard.tar", &reader).ok()) {
    shardpack::TarMember member;
    std::string bytes;
    for (int i = 0; i < 10000; ++i) {
      bool done = false;
      if (!reader->Next(&member, &done).ok() || done) break;
      if (member.regular && !reader->ReadData(1 << 20, &bytes).ok()) break;
    }
  }
  std::vector<shardpack::WdsSampleLocation> samples;
  (void)shardpack::IndexWdsShard(&env, "shard.tar", &samples);
  return 0;
}
