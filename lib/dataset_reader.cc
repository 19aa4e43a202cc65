#include "shardpack/dataset_reader.h"

#include "formats/lmdb/lmdb_random_reader.h"
#include "formats/raw/raw_dataset_reader.h"
#include "formats/wds/wds_dataset_reader.h"

namespace shardpack {

Status DatasetReader::Open(const std::string& dir, Env* env, std::unique_ptr<DatasetReader>* reader) {
  if (env == nullptr) env = Env::Default();
  Manifest manifest;
  SHARDPACK_RETURN_IF_ERROR(ReadManifest(env, dir, &manifest));
  if (manifest.format == "wds") return WdsDatasetReader::Open(env, dir, std::move(manifest), reader);
  if (manifest.format == "lmdb") return LmdbDatasetReader::Open(dir, std::move(manifest), reader);
  if (manifest.format == "raw") return RawDatasetReader::Open(env, dir, std::move(manifest), reader);
  return Status::Unsupported(dir + ": format '" + manifest.format + "' cannot be read by this version");
}

}  // namespace shardpack
