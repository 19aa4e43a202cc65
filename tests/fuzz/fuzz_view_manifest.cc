// Fuzz target: a view's manifest and its selection files (docs/views.md), which the readers, pack,
// subset and verify open from a folder anyone may have written. The input: a first line with the
// base shard's sample count (what the base manifest claims, as hostile as the rest), then the
// view's manifest.json, then after a line "--" the bytes of every selection file. The manifest's
// checksum of itself and the selection files' XXH64s are set to match, as a writer who knows the
// format would set them, so that what lies behind those checks is fuzzed. Whatever they hold: no
// crash, a view's count is its shards' counts added up, and a selection read back lists exactly
// the manifest's count of positions, ascending, each below the base shard's count.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ground/checksum.h"
#include "ground/manifest_json.h"
#include "ground/view_manifest.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string::npos) return 0;
  const uint64_t base_samples = std::strtoull(input.substr(0, newline).c_str(), nullptr, 10);
  const std::string rest = input.substr(newline + 1);
  const size_t cut = rest.find("\n--\n");
  const std::string text = rest.substr(0, cut);
  const std::string selection = cut == std::string::npos ? "" : rest.substr(cut + 4);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return 0;
  j[shardpack::kManifestChecksumKey] = shardpack::SelfChecksum(j);  // (computed without the field)
  shardpack::ViewManifest view;
  if (!shardpack::ParseViewManifest(j, "v/manifest.json", &view).ok()) return 0;
  // A view parsed holds what it says: its count is its shards' counts added up, without wrapping.
  uint64_t sum = 0;
  for (const shardpack::ViewShard& s : view.shards) {
    if (__builtin_add_overflow(sum, s.samples, &sum)) __builtin_trap();
  }
  if (sum != view.samples) __builtin_trap();
  shardpack::fuzz::MemoryEnv env;
  std::vector<uint32_t> positions;
  for (size_t i = 0; i < view.shards.size() && i < 4; ++i) {
    shardpack::ViewShard shard = view.shards[i];
    shard.selection.xxh64 = shardpack::ChecksumHex(shardpack::Xxh64(selection));
    env.Put("v/" + shard.selection.file, selection);
    if (!shardpack::ReadSelection(&env, "v", shard, base_samples, &positions).ok()) continue;
    if (positions.size() != shard.samples) __builtin_trap();
    for (size_t k = 0; k < positions.size(); ++k) {
      if (positions[k] >= base_samples || (k > 0 && positions[k] <= positions[k - 1])) __builtin_trap();
    }
  }
  return 0;
}
