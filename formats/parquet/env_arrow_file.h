// A file read through shardpack's Env, as Arrow's RandomAccessFile: Arrow's Parquet reader reads
// through the same seam as every other format (faults injected in tests; a remote dataset's
// files), never opening paths itself.
//
// The file is mapped where the Env can (Env::MapFile): a read of a column chunk (100 MB in the files
// `datasets` writes) is then a view of the mapping, not a copy, as MDS's shards are read
// (formats/common/whole_file.h, which says what a file cut short under a running read does).
// Elsewhere (a link, which MapFile does not follow) reads go through Env::NewRandomAccessFile.
#pragma once

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>

#include <memory>
#include <string>

#include "shardpack/env.h"

namespace shardpack {

// The memory pool every Arrow allocation of formats/parquet comes from: Arrow's default (mimalloc in
// the pyarrow wheel), which keeps freed memory for the next row group. With the system allocator,
// each 100 MB column was mapped afresh, faulted in and zeroed, and its builder's growth copied: a
// convert spent 5 times as long in the kernel as in its own work.
inline arrow::MemoryPool* ArrowPool() { return arrow::default_memory_pool(); }

class EnvArrowFile final : public arrow::io::RandomAccessFile {
 public:
  // Opens `path` through `env`; its size is taken once (a file that shrinks later fails its reads).
  static Status Open(Env* env, const std::string& path, std::shared_ptr<EnvArrowFile>* file);

  arrow::Status Close() override;
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Seek(int64_t position) override;
  arrow::Result<int64_t> GetSize() override { return int64_t(size_); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override;
  // Thread-safe: reads at an offset do not move the position.
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override;
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, bool allow_short_read, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes,
                                                       bool allow_short_read) override;

 private:
  EnvArrowFile(uint64_t size, std::string path) : size_(size), path_(std::move(path)) {}

  std::shared_ptr<MappedFile> mapped_;  // or
  std::unique_ptr<shardpack::RandomAccessFile> file_;
  uint64_t size_;
  std::string path_;
  int64_t position_ = 0;
  bool closed_ = false;
};

}  // namespace shardpack
