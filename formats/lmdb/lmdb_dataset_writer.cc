#include "formats/lmdb/lmdb_dataset_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/common/sample_metadata.h"
#include "formats/lmdb/lmdb_format.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "ground/units.h"
#include "ground/write_back.h"

namespace shardpack {
namespace {

// LMDB spends some bytes per record beyond the record itself (page rounding of overflow pages, leaf
// and branch pages, pages copied on write). A batch is given twice its bytes, plus a slack.
constexpr uint64_t kRoomFactor = 2;
constexpr uint64_t kRoomSlack = 1 << 20;

// A record of at least this many bytes goes into the file with pwrite(2) rather than through the
// map (see FillReserved).
constexpr size_t kWriteThroughFileBytes = 16 * 1024;

// Where in data.mdb the `size` bytes LMDB reserved at `reserved` lie, or -1 when that cannot be
// told for certain. A value too big for a leaf page gets overflow pages of its own, and with
// MDB_WRITEMAP `reserved` points just past the first one's header, in LMDB's shared mapping of the
// file. The header (LMDB's on-disk page format, mdb.c's MDB_page, unchanged since LMDB 0.9) starts
// with the page's number and has the P_OVERFLOW flag at byte 10.
off_t OverflowValueOffset(const char* reserved, size_t size, size_t page_size, uint64_t map_size) {
  constexpr size_t kPageHeaderBytes = 16;
  constexpr uint16_t kOverflowFlag = 0x04;
  const char* page = reserved - kPageHeaderBytes;
  if (reinterpret_cast<uintptr_t>(page) % page_size != 0) return -1;
  uint64_t pgno = 0;
  uint16_t flags = 0;
  std::memcpy(&pgno, page, sizeof pgno);
  std::memcpy(&flags, page + 10, sizeof flags);
  if ((flags & kOverflowFlag) == 0 || pgno == 0 || pgno > map_size / page_size) return -1;
  const uint64_t offset = pgno * page_size + kPageHeaderBytes;
  return offset + size <= map_size ? off_t(offset) : -1;
}

// Copies `size` bytes into a value LMDB reserved at `reserved`. A large value is written to the
// file with pwrite(2) instead of through the map: the shared mapping and the file's page cache are
// the same pages, but the first touch of a new page of the map faults it in by reading the
// still-sparse file, zero-filling 4 KiB only to overwrite it (a fifth of an LMDB pack's time,
// profiled), whereas a write of whole pages never reads them. pwrite also returns an error where a
// store into the map would die of SIGBUS (a full disk).
Status FillReserved(int fd, size_t page_size, uint64_t map_size, char* reserved, const char* data, size_t size,
                    const std::string& path) {
  off_t offset = size >= kWriteThroughFileBytes ? OverflowValueOffset(reserved, size, page_size, map_size) : -1;
  if (offset < 0) {
    std::memcpy(reserved, data, size);
    return Status::OK();
  }
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::FromErrno("cannot write to " + path, n < 0 ? errno : ENOSPC);
    data += n;
    size -= size_t(n);
    offset += n;
  }
  return Status::OK();
}

}  // namespace

// env: removes the environment's files on Abandon(); LMDB's file itself is written by LMDB and by
// FillReserved, outside the Env.
LmdbDatasetWriter::LmdbDatasetWriter(Env* env, std::string dir, bool sync, uint64_t initial_map_size)
    : env_(env), dir_(std::move(dir)), sync_(sync), initial_map_size_(initial_map_size) {}

// The commit thread uses this writer: it must end first.
LmdbDatasetWriter::~LmdbDatasetWriter() { (void)WaitForCommit(); }

Status LmdbDatasetWriter::Open() {
  created_files_ = true;  // even a failed open may have created some
  return LmdbEnvironment::Open(dir_, /*read_only=*/false, initial_map_size_, &lmdb_);
}

Status LmdbDatasetWriter::Queue(std::string key, const std::string& header, std::string_view image,
                                const std::vector<SampleField>* fields, bool raw_value) {
  const size_t offset = filling_.bytes.size();
  if (raw_value) {
    filling_.bytes.append(header);
  } else {
    AppendLmdbRecord(header, image, fields, &filling_.bytes);  // appends, so the buffer is never zero-filled first
  }
  const size_t size = filling_.bytes.size() - offset;
  filling_.records.push_back({std::move(key), offset, size});
  if (filling_.records.size() >= kBatchSamples || filling_.bytes.size() >= kBatchBytes) return StartCommit();
  return Status::OK();
}

Status LmdbDatasetWriter::StartCommit() {
  SHARDPACK_RETURN_IF_ERROR(WaitForCommit());
  if (filling_.records.empty()) return Status::OK();
  std::swap(filling_, committing_);
  commit_ = std::async(std::launch::async, [this] { return CommitBatch(&committing_); });
  return Status::OK();
}

Status LmdbDatasetWriter::WaitForCommit() { return commit_.valid() ? commit_.get() : Status::OK(); }

Status LmdbDatasetWriter::CommitBatch(Batch* batch) {
  if (!lmdb_) SHARDPACK_RETURN_IF_ERROR(Open());
  SHARDPACK_RETURN_IF_ERROR(lmdb_->GrowUntilFree(kRoomFactor * batch->bytes.size() + kRoomSlack));
  int fd = -1;
  MDB_stat stat;
  int rc = mdb_env_get_fd(lmdb_->env(), &fd);
  if (rc == 0) rc = mdb_env_stat(lmdb_->env(), &stat);
  if (rc != 0) return LmdbError("cannot inspect the LMDB environment in " + dir_, rc);
  const std::string path = JoinPath(dir_, kLmdbDataFile);
  // Allocates the disk blocks of the pages this batch appends (each record rounded up to whole
  // pages, plus a slack for leaf and branch pages), so that a full disk is an error here rather than
  // a SIGBUS when LMDB stores a page into its map. File systems without fallocate(2) go without.
  const uint64_t appended = batch->bytes.size() + batch->records.size() * stat.ms_psize + kRoomSlack;
  if (::fallocate(fd, 0, off_t(lmdb_->UsedBytes()), off_t(appended)) != 0 && errno != EOPNOTSUPP) {
    return Status::FromErrno("cannot allocate " + FormatBytes(appended) + " of disk space for " + path, errno);
  }
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  Status filled;
  rc = mdb_txn_begin(lmdb_->env(), nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  for (size_t i = 0; rc == 0 && filled.ok() && i < batch->records.size(); ++i) {
    const PendingRecord& r = batch->records[i];
    MDB_val k{r.key.size(), const_cast<char*>(r.key.data())};
    MDB_val v{r.size, nullptr};
    rc = mdb_put(txn, dbi, &k, &v, MDB_RESERVE | MDB_APPEND);
    if (rc == 0) {
      filled = FillReserved(fd, stat.ms_psize, lmdb_->map_size(), static_cast<char*>(v.mv_data),
                            batch->bytes.data() + r.offset, r.size, path);
    }
  }
  if (rc == 0 && filled.ok()) {
    rc = mdb_txn_commit(txn);
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  batch->bytes.clear();
  batch->records.clear();
  if (!filled.ok()) return filled;
  if (rc != 0) return LmdbError("cannot write records to the LMDB environment in " + dir_, rc);
  if (sync_) StartWriteBack(fd);
  return Status::OK();
}

// Starts (without waiting for) the disk write of the pages appended since the last call. Pages
// rewritten below that point (branch and meta pages) are left to the final sync. Best effort: a
// failure here shows up in the final sync.
void LmdbDatasetWriter::StartWriteBack(int fd) { shardpack::StartWriteBack(fd, lmdb_->UsedBytes(), &written_back_); }

Status LmdbDatasetWriter::Add(const Sample& sample) {
  if (!status_.ok()) return status_;
  // The common fields, and what a reader needs without the manifest. Keys are sorted when dumped.
  nlohmann::json header = SampleMetadata(sample);
  header["key"] = sample.key;
  header["label"] = sample.label;
  header["xxh64"] = ChecksumHex(BytesChecksum(sample));
  const bool with_fields = sample.fields != nullptr && !sample.fields->empty();
  if (with_fields) AddLmdbFieldsHeader(sample.bytes, *sample.fields, &header);
  status_ = Queue(IndexKey(samples_), header.dump(), sample.bytes, sample.fields, /*raw_value=*/false);
  if (!status_.ok()) return status_;
  bytes_ += 8 + sample.bytes.size();
  if (with_fields) {
    for (const SampleField& f : *sample.fields) {
      bytes_ += f.data.size();
      ++field_counts_[f.name];
    }
  }
  ++samples_;
  return Status::OK();
}

Status LmdbDatasetWriter::Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) {
  if (!status_.ok()) return status_;
  status_ = Queue(kLmdbMetadataKey, dataset_info.dump(), {}, nullptr, /*raw_value=*/true);
  if (status_.ok()) status_ = StartCommit();
  if (status_.ok()) status_ = WaitForCommit();
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
  entry.fields = field_counts_;
  uint64_t checksum = 0;
  status_ = ChecksumMappedFile(path, &checksum, &entry.bytes);
  if (!status_.ok()) return status_;
  entry.xxh64 = ChecksumHex(checksum);
  shards->assign(1, entry);
  return Status::OK();
}

// An environment is published only by Finish() and an LMDB pack cannot resume, so what an abandoned
// one wrote is of no use: it is removed rather than left as a map-sized data.mdb.
void LmdbDatasetWriter::Abandon() {
  (void)WaitForCommit();
  filling_ = Batch();
  committing_ = Batch();
  lmdb_.reset();
  if (created_files_) {
    (void)env_->RemoveFile(JoinPath(dir_, kLmdbDataFile));
    (void)env_->RemoveFile(JoinPath(dir_, kLmdbLockFile));
    created_files_ = false;
  }
}

}  // namespace shardpack
