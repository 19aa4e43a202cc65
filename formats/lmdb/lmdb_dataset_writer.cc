#include "formats/lmdb/lmdb_dataset_writer.h"

#include "formats/lmdb/lmdb_format.h"
#include "lib/sample_keys.h"
#include "shardpack/checksum.h"

namespace shardpack {

LmdbDatasetWriter::LmdbDatasetWriter(Env* env, std::string dir, bool sync, uint64_t initial_map_size)
    : env_(env), dir_(std::move(dir)), sync_(sync), initial_map_size_(initial_map_size) {}

LmdbDatasetWriter::~LmdbDatasetWriter() = default;

Status LmdbDatasetWriter::Open() {
  return LmdbEnvironment::Open(dir_, /*read_only=*/false, initial_map_size_, &lmdb_);
}

Status LmdbDatasetWriter::Add(const Sample& sample) {
  if (!status_.ok()) return status_;
  if (!lmdb_) {
    status_ = Open();
    if (!status_.ok()) return status_;
  }
  nlohmann::json header = {{"key", sample.key},
                           {"label", sample.label},
                           {"path", sample.relpath},
                           {"format", ImageFormatName(sample.image.format)},
                           {"width", sample.image.width},
                           {"height", sample.image.height},
                           {"xxh64", ChecksumHex(Xxh64(sample.bytes))}};
  header["class"] = sample.label >= 0 ? nlohmann::json(sample.class_name) : nlohmann::json(nullptr);
  batch_.emplace_back(IndexKey(samples_), EncodeLmdbRecord(header, sample.bytes));
  batch_bytes_ += batch_.back().second.size();
  bytes_ += batch_.back().second.size();
  ++samples_;
  if (batch_.size() >= kBatchSamples || batch_bytes_ >= kBatchBytes) status_ = CommitBatch();
  return status_;
}

Status LmdbDatasetWriter::CommitBatch() {
  if (batch_.empty()) return Status::OK();
  Status s = lmdb_->Write([&](MDB_txn* txn, MDB_dbi dbi) {
    for (auto& [key, record] : batch_) {
      MDB_val k{key.size(), key.data()};
      MDB_val v{record.size(), record.data()};
      int rc = mdb_put(txn, dbi, &k, &v, MDB_APPEND);
      if (rc != 0) return rc;
    }
    return 0;
  });
  batch_.clear();
  batch_bytes_ = 0;
  return s;
}

Status LmdbDatasetWriter::Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) {
  if (!status_.ok()) return status_;
  if (!lmdb_) {
    status_ = Open();
    if (!status_.ok()) return status_;
  }
  status_ = CommitBatch();
  if (!status_.ok()) return status_;
  std::string meta = dataset_info.dump();
  status_ = lmdb_->Write([&](MDB_txn* txn, MDB_dbi dbi) {
    std::string key = kLmdbMetadataKey;
    MDB_val k{key.size(), key.data()};
    MDB_val v{meta.size(), meta.data()};
    return mdb_put(txn, dbi, &k, &v, MDB_APPEND);
  });
  if (status_.ok() && sync_) status_ = lmdb_->Sync();
  map_size_ = lmdb_->map_size();
  lmdb_.reset();
  if (!status_.ok()) return status_;

  ShardEntry entry;
  entry.file = kLmdbDataFile;
  entry.samples = samples_;
  uint64_t checksum = 0;
  status_ = ChecksumFile(env_, JoinPath(dir_, entry.file), &checksum, &entry.bytes);
  if (!status_.ok()) return status_;
  entry.xxh64 = ChecksumHex(checksum);
  shards->assign(1, entry);
  return Status::OK();
}

void LmdbDatasetWriter::Abandon() {
  batch_.clear();
  lmdb_.reset();
}

}  // namespace shardpack
