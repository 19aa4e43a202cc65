#include "formats/lmdb/lmdb_environment.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "ground/checksum.h"
#include "shardpack/env.h"

namespace shardpack {

Status LmdbError(const std::string& context, int rc) { return Status::IOError(context + ": " + mdb_strerror(rc)); }

Status ChecksumMappedFile(const std::string& path, uint64_t* xxh64, uint64_t* size) {
  std::unique_ptr<MappedFile> file;
  SHARDPACK_RETURN_IF_ERROR(Env::Default()->MapFile(path, &file));
  *size = file->data().size();
  *xxh64 = Xxh64(file->data());
  return Status::OK();
}

Status LmdbEnvironment::Open(const std::string& dir, bool read_only, uint64_t map_size,
                             std::unique_ptr<LmdbEnvironment>* out) {
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return LmdbError("cannot create LMDB environment", rc);
  if (!read_only) rc = mdb_env_set_mapsize(env, map_size);
  // NOTLS: transactions are used from whichever thread runs the pipeline's writer stage.
  const unsigned flags = MDB_NOTLS | (read_only ? MDB_RDONLY : MDB_WRITEMAP | MDB_NOSYNC | MDB_NORDAHEAD);
  if (rc == 0) rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  if (rc != 0) {
    mdb_env_close(env);
    return LmdbError("cannot open LMDB environment in " + dir, rc);
  }
  MDB_envinfo info;
  mdb_env_info(env, &info);
  out->reset(new LmdbEnvironment(env, dir, info.me_mapsize));
  return Status::OK();
}

// An environment whose map could not be re-mapped is not closed: LMDB would unmap its old map
// again, which by then may be anyone's memory. Its descriptors and memory are leaked instead.
LmdbEnvironment::~LmdbEnvironment() {
  if (!broken_) mdb_env_close(env_);
}

uint64_t LmdbEnvironment::UsedBytes() const {
  MDB_envinfo info;
  MDB_stat stat;
  mdb_env_info(env_, &info);
  mdb_env_stat(env_, &stat);
  return (uint64_t(info.me_last_pgno) + 1) * stat.ms_psize;
}

Status LmdbEnvironment::GrowUntilFree(uint64_t free_bytes) {
  const uint64_t used = UsedBytes();
  uint64_t size = map_size_;
  while (size < used + free_bytes) size *= 2;
  if (size == map_size_) return Status::OK();
  const std::string what = "cannot grow the LMDB map of " + dir_ + " to " + std::to_string(size) + " bytes";
  // With MDB_WRITEMAP, LMDB unmaps its map, extends data.mdb to the new size and maps it again; if
  // the extension fails (a file size limit), it is left holding the unmapped address. Extending
  // the file first, where a failure is harmless, leaves LMDB nothing to extend.
  int fd = -1;
  if (mdb_env_get_fd(env_, &fd) == 0 && ::ftruncate(fd, off_t(size)) != 0) return Status::FromErrno(what, errno);
  const int rc = mdb_env_set_mapsize(env_, size);
  if (rc != 0) {
    broken_ = true;  // mapping the grown file failed: see the destructor
    return LmdbError(what, rc);
  }
  map_size_ = size;
  return Status::OK();
}

Status LmdbEnvironment::Read(const std::function<Status(MDB_txn*, MDB_dbi)>& visit) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
  if (rc != 0) return LmdbError("cannot begin LMDB read transaction in " + dir_, rc);
  MDB_dbi dbi;
  rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  Status s = rc == 0 ? visit(txn, dbi) : LmdbError("cannot open LMDB database in " + dir_, rc);
  mdb_txn_abort(txn);
  return s;
}

Status LmdbEnvironment::Sync() {
  int rc = mdb_env_sync(env_, 1);
  return rc == 0 ? Status::OK() : LmdbError("cannot sync LMDB environment in " + dir_, rc);
}

}  // namespace shardpack
