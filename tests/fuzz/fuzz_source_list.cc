// Fuzz target: `pack --list FILE` contents (relative path, tab, label; comments and blank lines),
// which users write by hand or generate from other tools.
#include <cstdint>
#include <string>

#include "ops/pack/source_list.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardpack::fuzz::MemoryEnv env;
  env.Put("list.tsv", std::string(reinterpret_cast<const char*>(data), size));
  shardpack::SourceTree tree;
  (void)shardpack::ReadSourceList(&env, "list.tsv", &tree);
  return 0;
}
