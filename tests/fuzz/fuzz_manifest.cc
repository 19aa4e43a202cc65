// Fuzz target: manifest.json, pack-journal.json and part manifest contents, through the same
// parsing the readers, verify, pack --resume and merge use.
#include <cstdint>
#include <string>

#include "ops/pack/pack_journal.h"
#include "ops/pack/pack_partition.h"
#include "shardpack/manifest.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  shardpack::fuzz::MemoryEnv env;
  env.Put("d/manifest.json", text);
  env.Put("d/pack-journal.json", text);
  shardpack::Manifest manifest;
  (void)shardpack::ReadManifest(&env, "d", &manifest);
  (void)shardpack::CheckManifestChecksum(&env, "d");
  shardpack::PackJournal journal;
  (void)shardpack::ReadPackJournal(&env, "d", &journal);
  env.Put("d/part-00000-of-00002.json", text);
  shardpack::PartPlan plan;
  nlohmann::json source;
  (void)shardpack::ReadPartManifest(&env, "d/part-00000-of-00002.json", &manifest, &plan, &source);
  return 0;
}
