// LmdbDatasetWriter: writes samples as records of one LMDB environment (lmdb_format.h).
//
// Records are gathered in a reused buffer and written in batches of kBatchSamples samples or
// kBatchBytes bytes, each batch in one write transaction, appended in key order (MDB_APPEND) into
// space LMDB reserves in its map (MDB_RESERVE with MDB_WRITEMAP). Large records are written into
// that space with pwrite(2) rather than through the map (FillReserved in the .cc says why). Before
// each batch the map is grown until it has room for it with a wide margin, so the user never
// chooses a map size.
//
// A full batch is committed on a thread of its own while Add() fills the other buffer: copying
// into the map (which page-faults every new page) is most of an LMDB pack's work, and the
// pipeline's ordered write stage would otherwise wait for it. Each batch is begun and committed on
// one thread because LMDB ties a write transaction (its writer lock) to the thread that began it.
// At most one batch commits at a time, so memory stays at two buffers. With `sync`, each commit
// also starts the disk write-back of the pages it added (sync_file_range), so that the final sync
// waits for the last batch only instead of the whole file.
//
// Finish() writes the dataset metadata record, syncs, closes the environment, trims data.mdb to the
// pages in use (WRITEMAP extends it to the map size) and checksums it.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "formats/lmdb/lmdb_environment.h"
#include "shardpack/env.h"

namespace shardpack {

class LmdbDatasetWriter final : public DatasetWriter {
 public:
  static constexpr size_t kBatchSamples = 1000;
  static constexpr size_t kBatchBytes = 32 << 20;

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
    size_t offset;  // in Batch::bytes
    size_t size;
  };
  struct Batch {
    std::string bytes;  // the records, back to back; its capacity is reused
    std::vector<PendingRecord> records;
  };

  Status Open();
  // Queues one record; `header`, `image` and the fields are copied. A raw value is `header` alone.
  Status Queue(std::string key, const std::string& header, std::string_view image,
               const std::vector<SampleField>* fields, bool raw_value);
  // Hands filling_ to a commit thread, after the previous batch's commit has ended.
  Status StartCommit();
  // Waits for the batch in commit, if any; its status.
  Status WaitForCommit();
  // Writes `batch` in one write transaction and clears it; runs on a commit thread.
  Status CommitBatch(Batch* batch);
  void StartWriteBack(int fd);  // fd: data.mdb's

  Env* env_;
  std::string dir_;
  bool sync_;
  uint64_t initial_map_size_;
  Status status_;
  std::unique_ptr<LmdbEnvironment> lmdb_;
  Batch filling_;               // Add() appends here
  Batch committing_;            // owned by the commit thread while commit_ is valid
  std::future<Status> commit_;  // the batch in commit
  uint64_t written_back_ = 0;   // data.mdb bytes whose write-back has been started
  bool created_files_ = false;  // Open() may have created the environment's files (Abandon removes them)
  uint64_t samples_ = 0;
  uint64_t bytes_ = 0;
  std::map<std::string, uint64_t> field_counts_;
  uint64_t map_size_ = 0;
};

}  // namespace shardpack
