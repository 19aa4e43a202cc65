#include "shardpack/dataset_reader.h"

#include "formats/lmdb/lmdb_random_reader.h"
#include "formats/raw/raw_dataset_reader.h"
#include "formats/wds/wds_dataset_reader.h"
#include "shardpack/shard_spec.h"

namespace shardpack {

Status DatasetReader::Open(const std::string& dir, Env* env, std::unique_ptr<DatasetReader>* reader) {
  if (env == nullptr) env = Env::Default();
  if (LooksLikeShardSpec(dir)) {
    std::vector<std::string> paths;
    SHARDPACK_RETURN_IF_ERROR(ExpandShardSpec(dir, &paths));
    return OpenShards(paths, env, reader);
  }
  Manifest manifest;
  SHARDPACK_RETURN_IF_ERROR(ReadManifest(env, dir, &manifest));
  if (manifest.format == "wds") return WdsDatasetReader::Open(env, dir, std::move(manifest), reader);
  if (manifest.format == "lmdb") return LmdbDatasetReader::Open(dir, std::move(manifest), reader);
  if (manifest.format == "raw") return RawDatasetReader::Open(env, dir, std::move(manifest), reader);
  return Status::Unsupported(dir + ": format '" + manifest.format + "' cannot be read by this version");
}

Status DatasetReader::OpenShards(const std::vector<std::string>& paths, Env* env,
                                 std::unique_ptr<DatasetReader>* reader) {
  if (env == nullptr) env = Env::Default();
  if (paths.empty()) return Status::InvalidArgument("no shards to open");
  return WdsDatasetReader::OpenShards(env, paths, reader);
}

}  // namespace shardpack
