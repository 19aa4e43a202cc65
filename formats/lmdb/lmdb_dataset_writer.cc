#include "formats/lmdb/lmdb_dataset_writer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/lmdb/lmdb_format.h"
#include "lib/sample_keys.h"
#include "shardpack/checksum.h"

namespace shardpack {
namespace {

// LMDB spends some bytes per record beyond the record itself (page rounding of overflow pages, leaf
// and branch pages, pages copied on write). A batch is given twice its bytes, plus a slack.
constexpr uint64_t kRoomFactor = 2;
constexpr uint64_t kRoomSlack = 1 << 20;

// With MDB_WRITEMAP a reserved value lies in the file mapping. Populating its pages in one call
// replaces a page fault per 4 KiB page; kernels without MADV_POPULATE_WRITE ignore it.
void PrefaultForWrite(void* data, size_t size) {
  const uintptr_t page = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + size;
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

}  // namespace

// env: unused; LMDB does its file I/O through its own map (kept so every writer is built alike).
LmdbDatasetWriter::LmdbDatasetWriter(Env* /*env*/, std::string dir, bool sync, uint64_t initial_map_size)
    : dir_(std::move(dir)), sync_(sync), initial_map_size_(initial_map_size) {}

LmdbDatasetWriter::~LmdbDatasetWriter() = default;

Status LmdbDatasetWriter::Open() {
  return LmdbEnvironment::Open(dir_, /*read_only=*/false, initial_map_size_, &lmdb_);
}

Status LmdbDatasetWriter::Queue(std::string key, const std::string& header, std::string_view image, bool raw_value) {
  const size_t offset = batch_.size();
  const size_t size = raw_value ? header.size() : 8 + header.size() + image.size();
  if (raw_value) {
    batch_.append(header);
  } else {
    AppendLmdbRecord(header, image, &batch_);  // appends, so the buffer is never zero-filled first
  }
  pending_.push_back({std::move(key), offset, size});
  if (pending_.size() >= kBatchSamples || batch_.size() >= kBatchBytes) return WriteBatch();
  return Status::OK();
}

Status LmdbDatasetWriter::WriteBatch() {
  if (pending_.empty()) return Status::OK();
  if (!lmdb_) SHARDPACK_RETURN_IF_ERROR(Open());
  SHARDPACK_RETURN_IF_ERROR(lmdb_->GrowUntilFree(kRoomFactor * batch_.size() + kRoomSlack));
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  int rc = mdb_txn_begin(lmdb_->env(), nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  for (size_t i = 0; rc == 0 && i < pending_.size(); ++i) {
    const PendingRecord& r = pending_[i];
    MDB_val k{r.key.size(), const_cast<char*>(r.key.data())};
    MDB_val v{r.size, nullptr};
    rc = mdb_put(txn, dbi, &k, &v, MDB_RESERVE | MDB_APPEND);
    if (rc == 0) {
      PrefaultForWrite(v.mv_data, r.size);
      std::memcpy(v.mv_data, batch_.data() + r.offset, r.size);
    }
  }
  if (rc == 0) {
    rc = mdb_txn_commit(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  batch_.clear();
  pending_.clear();
  return rc == 0 ? Status::OK() : LmdbError("cannot write records to the LMDB environment in " + dir_, rc);
}

Status LmdbDatasetWriter::Add(const Sample& sample) {
  if (!status_.ok()) return status_;
  nlohmann::json header = {{"key", sample.key},
                           {"label", sample.label},
                           {"path", sample.relpath},
                           {"format", ImageFormatName(sample.image.format)},
                           {"width", sample.image.width},
                           {"height", sample.image.height},
                           {"xxh64", ChecksumHex(Xxh64(sample.bytes))}};
  header["class"] = sample.class_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(sample.class_name);
  if (sample.extra != nullptr) header["source"] = *sample.extra;
  status_ = Queue(IndexKey(samples_), header.dump(), sample.bytes, /*raw_value=*/false);
  if (!status_.ok()) return status_;
  bytes_ += 8 + sample.bytes.size();
  ++samples_;
  return Status::OK();
}

Status LmdbDatasetWriter::Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) {
  if (!status_.ok()) return status_;
  status_ = Queue(kLmdbMetadataKey, dataset_info.dump(), {}, /*raw_value=*/true);
  if (status_.ok()) status_ = WriteBatch();
  if (status_.ok() && sync_) status_ = lmdb_->Sync();
  if (!status_.ok()) return status_;
  const uint64_t used = lmdb_->UsedBytes();
  map_size_ = lmdb_->map_size();
  lmdb_.reset();
  // Pages past the last one in use are zeros that WRITEMAP added; LMDB never reads them.
  const std::string path = JoinPath(dir_, kLmdbDataFile);
  if (::truncate(path.c_str(), static_cast<off_t>(used)) != 0) {
    status_ = Status::FromErrno("cannot trim " + path, errno);
    return status_;
  }
  ShardEntry entry;
  entry.file = kLmdbDataFile;
  entry.samples = samples_;
  uint64_t checksum = 0;
  status_ = ChecksumMappedFile(path, &checksum, &entry.bytes);
  if (!status_.ok()) return status_;
  entry.xxh64 = ChecksumHex(checksum);
  shards->assign(1, entry);
  return Status::OK();
}

void LmdbDatasetWriter::Abandon() {
  batch_.clear();
  pending_.clear();
  lmdb_.reset();
}

}  // namespace shardpack
