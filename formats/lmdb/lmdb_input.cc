#include "formats/lmdb/lmdb_input.h"

#include "formats/lmdb/lmdb_format.h"

namespace shardpack {

Status LmdbInput::Open(const std::string& dir, std::vector<std::string> classes, uint64_t expected,
                       std::unique_ptr<PackInput>* input) {
  std::unique_ptr<LmdbInput> in(new LmdbInput(std::move(classes), expected));
  SHARDPACK_RETURN_IF_ERROR(LmdbEnvironment::Open(dir, /*read_only=*/true, kLmdbInitialMapSize, &in->lmdb_));
  MDB_dbi dbi;
  int rc = mdb_txn_begin(in->lmdb_->env(), nullptr, MDB_RDONLY, &in->txn_);
  if (rc == 0) rc = mdb_dbi_open(in->txn_, nullptr, 0, &dbi);
  if (rc == 0) rc = mdb_cursor_open(in->txn_, dbi, &in->cursor_);
  if (rc != 0) return LmdbError("cannot read LMDB environment in " + dir, rc);
  *input = std::move(in);
  return Status::OK();
}

LmdbInput::~LmdbInput() {
  if (cursor_) mdb_cursor_close(cursor_);
  if (txn_) mdb_txn_abort(txn_);
}

Status LmdbInput::Next(PackItem* item, bool* done) {
  MDB_val k, v;
  int rc = mdb_cursor_get(cursor_, &k, &v, started_ ? MDB_NEXT : MDB_FIRST);
  started_ = true;
  const std::string_view key(static_cast<const char*>(k.mv_data), rc == 0 ? k.mv_size : 0);
  if (rc == MDB_NOTFOUND || key == kLmdbMetadataKey) {
    *done = true;
    return Status::OK();
  }
  if (rc != 0) return LmdbError("cannot read LMDB record", rc);
  *done = false;
  LmdbSample sample;
  item->loaded = true;
  item->extra = nullptr;
  item->status = ParseLmdbSample(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size), key, &sample);
  item->relpath = item->status.ok() ? std::move(sample.path) : std::string(key);
  item->key = item->status.ok() ? std::move(sample.key) : std::string(key);
  item->label = sample.label;
  item->bytes.assign(sample.image.data(), sample.image.size());
  item->fields.clear();
  item->field_relpaths.clear();
  // The pipeline reports them as not packed when the output format keeps none.
  for (const LmdbField& f : sample.fields) item->fields.push_back({f.name, std::string(f.data)});
  return Status::OK();
}

}  // namespace shardpack
