#include "formats/lmdb/lmdb_environment.h"

namespace shardpack {

Status LmdbError(const std::string& context, int rc) {
  return Status::IOError(context + ": " + mdb_strerror(rc));
}

Status LmdbEnvironment::Open(const std::string& dir, bool read_only, uint64_t map_size,
                             std::unique_ptr<LmdbEnvironment>* out) {
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return LmdbError("cannot create LMDB environment", rc);
  rc = mdb_env_set_mapsize(env, map_size);
  // NOSYNC while writing: durability comes from one explicit Sync() before the manifest is written.
  // NOTLS: transactions may be used from whichever thread runs the pipeline's writer stage.
  unsigned flags = MDB_NOTLS | (read_only ? MDB_RDONLY : MDB_NOSYNC);
  if (rc == 0) rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  if (rc != 0) {
    mdb_env_close(env);
    return LmdbError("cannot open LMDB environment in " + dir, rc);
  }
  if (read_only) {
    MDB_envinfo info;
    mdb_env_info(env, &info);
    map_size = info.me_mapsize;
  }
  out->reset(new LmdbEnvironment(env, dir, map_size));
  return Status::OK();
}

LmdbEnvironment::~LmdbEnvironment() { mdb_env_close(env_); }

Status LmdbEnvironment::Write(const std::function<int(MDB_txn*, MDB_dbi)>& fill) {
  for (;;) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
    if (rc != 0) return LmdbError("cannot begin LMDB transaction in " + dir_, rc);
    MDB_dbi dbi;
    rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
    if (rc == 0) rc = fill(txn, dbi);
    if (rc == 0) {
      rc = mdb_txn_commit(txn);
    } else {
      mdb_txn_abort(txn);
    }
    if (rc != MDB_MAP_FULL) {
      return rc == 0 ? Status::OK() : LmdbError("cannot write to LMDB environment in " + dir_, rc);
    }
    map_size_ *= 2;
    rc = mdb_env_set_mapsize(env_, map_size_);
    if (rc != 0) return LmdbError("cannot grow LMDB map in " + dir_, rc);
  }
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
