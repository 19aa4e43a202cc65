#include "ops/read/opened_dataset.h"

#include "formats/registry/registry.h"
#include "ground/manifest_json.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

// A URL without a cache folder: the manifest and small files into memory, shards as they are read.
Status OpenStreamedDataset(const Location& location, Env* env, const RemoteAccess& access, OpenedDataset* dataset) {
  const auto new_client = access.new_client;
  std::unique_ptr<HttpClient> http = new_client();
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  SHARDPACK_RETURN_IF_ERROR(FindFormatOf(location.text, remote.manifest, &dataset->format));
  if (!dataset->format->reads_shards_through_env()) {
    return Status::InvalidArgument("reading " + location.text + " needs a local cache folder (the " +
                                   std::string(dataset->format->name()) + " format is one file, read at random): set " +
                                   kCacheEnvVar + "=DIR with room for the dataset");
  }
  SHARDPACK_RETURN_IF_ERROR(StreamedDatasetEnv::Open(env, remote, new_client, &dataset->streamed));
  dataset->dir = remote.base;
  dataset->manifest = std::move(remote.manifest);
  dataset->env = dataset->streamed.get();
  return Status::OK();
}

}  // namespace

Status OpenDataset(const Location& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset,
                   bool check_manifest) {
  dataset->env = env;
  if (location.remote()) {
    RemoteAccess access;
    SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, remote, &access));
    if (access.cache_dir.empty()) return OpenStreamedDataset(location, env, access, dataset);
  }
  SHARDPACK_RETURN_IF_ERROR(ResolveDatasetLocation(location, remote, env, &dataset->dir));
  SHARDPACK_RETURN_IF_ERROR(check_manifest ? ReadCheckedManifest(env, dataset->dir, &dataset->manifest)
                                           : ReadManifest(env, dataset->dir, &dataset->manifest));
  return FindFormatOf(dataset->dir, dataset->manifest, &dataset->format);
}

Status OpenDatasetAt(const std::string& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  return OpenDataset(parsed, remote, env != nullptr ? env : Env::Default(), dataset);
}

}  // namespace shardpack
