// Checking an LMDB dataset: verification of the environment and its records, and the per-sample
// records that `stat` summarises. (Random access for readers: lmdb_dataset_reader.h.)
#pragma once

#include <string>
#include <vector>

#include "formats/common/shard_check.h"
#include "ground/sample_table.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/verify.h"

namespace shardpack {

// Checks data.mdb against its manifest entry (size, XXH64) and, only when those match (LMDB itself
// trusts its file and may crash on a damaged one), every record: keys in sample order, record
// structure, image checksum, the metadata record, and with decode every image.
void VerifyLmdbDataset(Env* env, const std::string& dir, const Manifest& manifest, const ShardEntry& entry,
                       const VerifyOptions& options, ShardCheck* check);

// One SampleRecord per sample (offset 0, size = record bytes, xxh64 = the image checksum).
Status ReadLmdbSampleRecords(const std::string& dir, std::vector<SampleRecord>* records);

}  // namespace shardpack
