// LmdbEnvironment: owns one MDB_env and turns LMDB's integer errors into Status values. LMDB maps
// the file itself, so its I/O does not go through shardpack's Env.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "shardpack/status.h"

namespace shardpack {

Status LmdbError(const std::string& context, int rc);

// XXH64 and size of a whole file read through a private read-only mapping: after a pack the file
// is in the page cache, and hashing it in place costs no copy.
Status ChecksumMappedFile(const std::string& path, uint64_t* xxh64, uint64_t* size);

class LmdbEnvironment {
 public:
  // Opens the environment in folder `dir`. A writable one is created when missing and written
  // through the map (MDB_WRITEMAP: records are copied once, straight into the page cache) without
  // syncing each commit (MDB_NOSYNC: one Sync() before the manifest is written makes it durable)
  // and without read-ahead (MDB_NORDAHEAD: otherwise every first touch of a new page makes the
  // kernel read ahead and zero-fill a window of the still-sparse file: docs/performance.md, "pack
  // --format lmdb").
  static Status Open(const std::string& dir, bool read_only, uint64_t map_size, std::unique_ptr<LmdbEnvironment>* out);
  ~LmdbEnvironment();
  LmdbEnvironment(const LmdbEnvironment&) = delete;
  LmdbEnvironment& operator=(const LmdbEnvironment&) = delete;

  MDB_env* env() const { return env_; }
  const std::string& dir() const { return dir_; }
  uint64_t map_size() const { return map_size_; }
  // Bytes of data.mdb that hold pages (the file may be longer: WRITEMAP extends it to the map size).
  uint64_t UsedBytes() const;
  // Doubles the map until at least `free_bytes` are free. No transaction may be open.
  Status GrowUntilFree(uint64_t free_bytes);
  // Runs `visit` inside one read-only transaction.
  Status Read(const std::function<Status(MDB_txn*, MDB_dbi)>& visit);
  Status Sync();

 private:
  LmdbEnvironment(MDB_env* env, std::string dir, uint64_t map_size)
      : env_(env), dir_(std::move(dir)), map_size_(map_size) {}
  MDB_env* env_;
  std::string dir_;
  uint64_t map_size_;
  bool broken_ = false;  // LMDB failed to re-map a grown map (see the destructor)
};

}  // namespace shardpack
