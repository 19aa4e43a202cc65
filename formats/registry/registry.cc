#include "formats/registry/registry.h"

#include "formats/lmdb/lmdb.h"
#include "formats/mds/mds.h"
#include "formats/parquet/parquet.h"
#include "formats/raw/raw.h"
#include "formats/tfrecord/tfrecord_input.h"
#include "formats/wds/wds.h"

namespace shardpack {

const std::vector<const Format*>& AllFormats() {
  // The table. A plain list, built on first use: no static self-registration to go missing
  // when a linker drops an object file nobody refers to.
  static const std::vector<const Format*> formats = {
      &WdsFormat(),     &LmdbFormat(), &RawFormat(), &MdsFormat(), &LitDataFormat(),
#ifdef SHARDPACK_HAVE_PARQUET
      &ParquetFormat(),
#endif
  };
  return formats;
}

Status FindFormat(DatasetFormat id, const Format** format) {
  for (const Format* f : AllFormats()) {
    if (f->id() == id) {
      *format = f;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("format number " + std::to_string(int(id)) + " has no implementation; use " +
                                 DatasetFormatNames());
}

Status FindFormatOf(const std::string& dir, const Manifest& manifest, const Format** format) {
  if (FindFormat(manifest.format, format).ok()) return Status::OK();
  return Status::Unsupported(dir + ": format '" + std::string(DatasetFormatName(manifest.format)) +
                             "' cannot be read by this version (it reads " + DatasetFormatNames(" and ") + ")");
}

Status OpenForeignInput(Env* env, const std::string& path, uint64_t max_member_bytes,
                        std::unique_ptr<PackInput>* input) {
  // TFRecord first: WebDataset takes any single file as a tar shard.
  const Status tfrecord = TfRecordInput::Open(env, path, max_member_bytes, input);
  if (tfrecord.code() != Status::Code::kNotFound) return tfrecord;
  Status first_error;  // the first format's: what a folder without a manifest should hold
  for (const Format* f : AllFormats()) {
    Status s = f->OpenForeignInput(env, path, max_member_bytes, input);
    if (s.code() != Status::Code::kNotFound) return s;
    if (first_error.ok()) first_error = s;
  }
  return first_error;
}

Status OpenForeignDataset(Env* env, const std::string& dir, Manifest* manifest, const Format** format) {
  const Status mds = OpenMdsManifest(env, dir, manifest, format);
  if (mds.code() != Status::Code::kNotFound) return mds;
  return OpenParquetManifest(env, dir, manifest, format);
}

const Format& ShardListFormat() {
  for (const Format* f : AllFormats()) {
    if (f->reads_shard_lists()) return *f;
  }
  return *AllFormats().front();  // unreachable while the table holds a format that reads them
}

}  // namespace shardpack
