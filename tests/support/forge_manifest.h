// Rewrites a dataset's manifest as a forger would who knows the format, for tests of what the
// readers refuse (or must still name) when a side file and the manifest agree on a bad value.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ground/checksum.h"
#include "tests/support/temp_dir.h"

namespace shardpack::testing {

// `edit` changes the parsed manifest of `dir` (the checksums of the side files it changed
// included); then the manifest's checksum of itself is made to match (xxh64 of the manifest's
// 2-space dump without its checksum field, docs/formats/manifest.md) and the file rewritten.
inline void ForgeManifest(const std::string& dir, const std::function<void(nlohmann::json*)>& edit) {
  nlohmann::json j = nlohmann::json::parse(ReadFile(dir + "/manifest.json"));
  edit(&j);
  j.erase("manifest_xxh64");
  j["manifest_xxh64"] = ChecksumHex(Xxh64(j.dump(2)));
  WriteFile(dir + "/manifest.json", j.dump(2) + "\n");
}

}  // namespace shardpack::testing
