// One pass over a shard file: its whole XXH64 and, to name damaged samples, the XXH64 of each
// sample's byte range listed in its sample table. Shared by every format that has sample tables.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ground/sample_table.h"
#include "shardpack/env.h"

namespace shardpack {

// Checks that the shard file exists and has the size its manifest entry lists; calls
// problem("", what) otherwise. Returns false when the file is missing (nothing more to check).
bool CheckShardFileSize(Env* env, const std::string& path, uint64_t expected_bytes,
                        const std::function<void(const std::string& key, const std::string& what)>& problem);

// Calls problem(key, what) for each sample whose range checksum differs or that lies past the end,
// and problem("", what) when the file cannot be read or its whole checksum differs from
// expected_xxh64. *bytes_read receives the file's length.
void CheckShardChecksums(Env* env, const std::string& path, const std::string& expected_xxh64,
                         const std::vector<SampleRecord>& records,
                         const std::function<void(const std::string& key, const std::string& what)>& problem,
                         uint64_t* bytes_read);

}  // namespace shardpack
