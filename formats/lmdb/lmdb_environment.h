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

class LmdbEnvironment {
 public:
  // Opens (creating when writable) the environment in folder `dir`.
  static Status Open(const std::string& dir, bool read_only, uint64_t map_size,
                     std::unique_ptr<LmdbEnvironment>* out);
  ~LmdbEnvironment();
  LmdbEnvironment(const LmdbEnvironment&) = delete;
  LmdbEnvironment& operator=(const LmdbEnvironment&) = delete;

  // Runs `fill` inside one write transaction and commits. When the map is full, the transaction
  // is thrown away, the map doubled, and `fill` run again: callers never choose a map size.
  Status Write(const std::function<int(MDB_txn*, MDB_dbi)>& fill);
  // Runs `visit` inside one read-only transaction.
  Status Read(const std::function<Status(MDB_txn*, MDB_dbi)>& visit);
  Status Sync();
  uint64_t map_size() const { return map_size_; }

 private:
  LmdbEnvironment(MDB_env* env, std::string dir, uint64_t map_size)
      : env_(env), dir_(std::move(dir)), map_size_(map_size) {}
  MDB_env* env_;
  std::string dir_;
  uint64_t map_size_;
};

}  // namespace shardpack
