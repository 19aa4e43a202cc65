// The manifest's JSON form (docs/formats/manifest.md), for the code that writes and reads it: the
// manifest file itself, the pack journal, and the readers of the recorded options. Kept out of the
// public shardpack/manifest.h so that no nlohmann type reaches an embedding user.
#pragma once

#include <nlohmann/json.hpp>

#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

nlohmann::json ManifestToJson(const Manifest& manifest);
// Fails with DataLoss naming the missing or mistyped field, Unsupported for a version or a format
// this shardpack does not know.
Status ManifestFromJson(const nlohmann::json& json, Manifest* manifest);

// The manifest in `text` (read from `path`, which messages name): ManifestFromJson's checks, and
// the errors DataLoss (Unsupported as it is) prefixed with the path. A large one leaves the process
// holding what the manifest keeps, not what parsing it took (ReturnFreedMemory in manifest.cc).
Status ParseManifestText(const std::string& text, const std::string& path, Manifest* manifest);

// ParseManifestText, having first checked the manifest's checksum of itself (CheckManifestText's
// errors) on the same parse: what readers that trust the manifest's offsets open.
Status ParseCheckedManifestText(const std::string& text, const std::string& path, Manifest* manifest);
// ReadManifest with that check.
Status ReadCheckedManifest(Env* env, const std::string& dir, Manifest* manifest);

// CheckManifestChecksum on the manifest's text (read from `path`, which messages name): DataLoss
// when it is not JSON, lacks its checksum or no longer matches it.
Status CheckManifestText(const std::string& text, const std::string& path);

// The checksum a manifest (or a view's manifest) holds of itself: xxh64 of its JSON (2-space dump,
// keys sorted) without the kManifestChecksumKey field; and its check, which takes the field out
// of `j` (DataLoss naming `path` when it is missing or does not match).
std::string SelfChecksum(nlohmann::json j);
Status CheckSelfChecksum(nlohmann::json* j, const std::string& path);

// manifest.options_json parsed; DataLoss when it is not a JSON object. A manifest read from disk
// passed ManifestFromJson's checks: every number in it is a non-negative integer, "compress" a
// string and "keep_size" a boolean.
Status ManifestOptions(const ManifestHeader& manifest, nlohmann::json* options);

}  // namespace shardpack
