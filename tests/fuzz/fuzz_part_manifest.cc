// Fuzz target: part manifests, which `shardpack merge` reads from a folder every task of a job
// array could write (part-NNNNN-of-NNNNN.json). The input's first line is a file name, the rest
// the manifest. Whatever they hold: a name is taken as a part manifest only when it is spelled as
// pack spells it, a part read back describes a part of its whole, and no name it lists is taken
// that would lead outside the dataset.
#include <cstdint>
#include <string>

#include "ops/pack/pack_partition.h"
#include "storage/remote_dataset.h"
#include "storage/url.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string name = input.substr(0, newline);
  uint32_t part = 0, parts = 0;
  bool writer = false;
  if (shardpack::ParsePartManifestName(name, &part, &parts, &writer) &&
      shardpack::PartName(part, parts, writer) + ".json" != name) {
    __builtin_trap();
  }
  shardpack::fuzz::MemoryEnv env;
  env.Put("out/part.json", newline == std::string::npos ? "" : input.substr(newline + 1));
  shardpack::Manifest manifest;
  shardpack::PartPlan plan;
  nlohmann::json source;
  if (!shardpack::ReadPartManifest(&env, "out/part.json", &manifest, &plan, &source).ok()) return 0;
  if (plan.parts == 0 || plan.part >= plan.parts) __builtin_trap();
  for (const shardpack::ShardEntry& s : manifest.shards) {
    if (shardpack::CheckDatasetFileName(s.file).ok() &&
        (s.file[0] == '/' || shardpack::PercentDecode(s.file).find("..") != std::string::npos)) {
      __builtin_trap();
    }
  }
  return 0;
}
