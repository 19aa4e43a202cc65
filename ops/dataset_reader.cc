#include "shardpack/dataset_reader.h"

#include "formats/registry/registry.h"
#include "ops/opened_dataset.h"
#include "ops/remote_dataset.h"
#include "ops/remote_dataset_reader.h"
#include "shardpack/shard_spec.h"

namespace shardpack {

Status DatasetReader::Open(const std::string& location, Env* env, std::unique_ptr<DatasetReader>* reader,
                           const RemoteOptions& remote) {
  if (env == nullptr) env = Env::Default();
  if (LooksLikeShardSpec(location)) {
    if (IsRemoteLocation(location) && location.rfind("pipe:", 0) != 0) {
      RemoteAccess access;
      SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, remote.cache_dir, &access));
      if (access.cache_dir.empty()) return OpenStreamedShardList(location, env, remote, reader);
    }
    std::vector<std::string> paths;
    SHARDPACK_RETURN_IF_ERROR(ResolveShardList(location, env, &paths));
    return OpenShards(paths, env, reader);
  }
  if (IsRemoteLocation(location) && location.rfind("pipe:", 0) != 0)
    return OpenRemoteDatasetReader(location, env, remote, reader);
  OpenedDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(location, env, &dataset));
  // Readers trust the manifest's checksums of the side files, which they trust for offsets: the
  // manifest must be the one pack wrote.
  SHARDPACK_RETURN_IF_ERROR(CheckManifestChecksum(env, dataset.dir));
  return dataset.format->OpenReader(env, dataset.dir, std::move(dataset.manifest), reader);
}

Status DatasetReader::OpenShards(const std::vector<std::string>& paths, Env* env,
                                 std::unique_ptr<DatasetReader>* reader) {
  if (env == nullptr) env = Env::Default();
  if (paths.empty()) return Status::InvalidArgument("no shards to open");
  return ShardListFormat().OpenShardList(env, paths, reader);
}

}  // namespace shardpack
