// LmdbDatasetWriter: writes samples as records of one LMDB environment (lmdb_format.h).
//
// Records are buffered and written in batches, one write transaction per batch (kBatchSamples
// samples or kBatchBytes bytes, whichever comes first), appended in key order (MDB_APPEND). A full
// map is grown and the batch retried, so the user never chooses a map size. Finish() writes the
// dataset metadata record, syncs, closes the environment and checksums data.mdb.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/lmdb/lmdb_environment.h"
#include "shardpack/dataset_writer.h"
#include "shardpack/env.h"

namespace shardpack {

class LmdbDatasetWriter final : public DatasetWriter {
 public:
  static constexpr size_t kBatchSamples = 1000;
  static constexpr size_t kBatchBytes = 64 << 20;

  // initial_map_size: where the map starts (it doubles whenever it fills).
  LmdbDatasetWriter(Env* env, std::string dir, bool sync, uint64_t initial_map_size);
  ~LmdbDatasetWriter() override;

  Status Add(const Sample& sample) override;
  Status Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) override;
  void Abandon() override;
  Status status() const override { return status_; }
  uint64_t samples_written() const override { return samples_; }
  uint64_t bytes_written() const override { return bytes_; }
  // The map size in bytes the environment reached (for tests of map growth).
  uint64_t map_size() const { return map_size_; }

 private:
  Status Open();
  Status CommitBatch();

  Env* env_;
  std::string dir_;
  bool sync_;
  uint64_t initial_map_size_;
  Status status_;
  std::unique_ptr<LmdbEnvironment> lmdb_;
  std::vector<std::pair<std::string, std::string>> batch_;  // key, record
  size_t batch_bytes_ = 0;
  uint64_t samples_ = 0;
  uint64_t bytes_ = 0;
  uint64_t map_size_ = 0;
};

}  // namespace shardpack
