// LmdbDatasetWriter: writes samples as records of one LMDB environment (lmdb_format.h).
//
// Records are gathered in a reused buffer and written in batches of kBatchSamples samples or
// kBatchBytes bytes, each batch in one write transaction, appended in key order (MDB_APPEND) straight
// into the map (MDB_RESERVE with MDB_WRITEMAP). A batch is begun and committed within one call
// because LMDB ties a write transaction to the thread that began it, and the pipeline may call Add()
// from different threads. Before each batch the map is grown until it has room for it with a wide
// margin, so the user never chooses a map size. Finish() writes the dataset metadata record, syncs,
// closes the environment, trims data.mdb to the pages in use (WRITEMAP extends it to the map size)
// and checksums it.
#pragma once

#include <memory>
#include <string>
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
  // One environment, published only by Finish: nothing to show or resume from before that (pack
  // --resume starts an LMDB pack over).
  const std::vector<ShardEntry>& published() const override {
    static const std::vector<ShardEntry> none;
    return none;
  }
  Status ResumeAfter(const std::vector<ShardEntry>&) override {
    return Status::Unsupported("an LMDB pack cannot resume after shards");
  }
  uint64_t samples_written() const override { return samples_; }
  uint64_t bytes_written() const override { return bytes_; }
  // The map size in bytes the environment reached (for tests of map growth).
  uint64_t map_size() const { return map_size_; }

 private:
  struct PendingRecord {
    std::string key;
    size_t offset;  // in batch_
    size_t size;
  };

  Status Open();
  // Queues one record; `header` and `image` are copied. A raw value is `header` alone.
  Status Queue(std::string key, const std::string& header, std::string_view image, bool raw_value);
  Status WriteBatch();

  std::string dir_;
  bool sync_;
  uint64_t initial_map_size_;
  Status status_;
  std::unique_ptr<LmdbEnvironment> lmdb_;
  std::string batch_;  // the records of the batch, back to back; its capacity is reused
  std::vector<PendingRecord> pending_;
  uint64_t samples_ = 0;
  uint64_t bytes_ = 0;
  uint64_t map_size_ = 0;
};

}  // namespace shardpack
