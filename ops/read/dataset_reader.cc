#include "shardpack/dataset_reader.h"

#include "formats/registry/registry.h"
#include "ops/read/opened_dataset.h"
#include "ops/read/remote_dataset_reader.h"
#include "ops/read/view_dataset_reader.h"
#include "storage/location.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

// A view's base is opened as any dataset is (a URL by range requests or a cache), then checked to
// be the one the view was made from.
Status OpenView(std::shared_ptr<const OpenedView> view, Env* env, const RemoteOptions& remote,
                std::unique_ptr<DatasetReader>* reader) {
  const std::string base_location = ViewBaseLocation(*view);
  std::unique_ptr<DatasetReader> base;
  SHARDPACK_RETURN_IF_ERROR(
      DatasetReader::Open(base_location, env, &base, remote).WithPrefix("the base of view " + view->shown + ": "));
  const ShardTable& shards = base->manifest().shards;
  SHARDPACK_RETURN_IF_ERROR(CheckViewBase(
      view->manifest, view->shown, base->manifest(), shards.sample_counts(), [&](size_t i) { return shards.xxh64(i); },
      base_location));
  return ViewDatasetReader::Open(std::move(view), std::move(base), reader);
}

}  // namespace

Status DatasetReader::Open(const std::string& text, Env* env, std::unique_ptr<DatasetReader>* reader,
                           const RemoteOptions& remote) {
  if (env == nullptr) env = Env::Default();
  Location location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(text, &location));
  if (location.shard_list) {
    // A remote list without a cache folder streams; a pipe: list and a cached one are copied whole.
    if (location.remote() && remote.cache_dir.empty()) return OpenStreamedShardList(location, env, remote, reader);
    std::vector<std::string> paths;
    SHARDPACK_RETURN_IF_ERROR(ResolveShardList(location, remote, env, &paths));
    return OpenShards(paths, env, reader, remote);
  }
  if (location.remote()) return OpenRemoteDatasetReader(location, env, remote, reader);
  std::vector<std::string> foreign;  // a folder of another tool's shards, without a manifest
  SHARDPACK_RETURN_IF_ERROR(FindForeignShards(location, remote, env, &foreign));
  if (!foreign.empty()) return OpenShards(foreign, env, reader, remote);
  OpenedDataset dataset;
  // Readers trust the manifest's checksums of the side files, which they trust for offsets: the
  // manifest must be the one pack wrote.
  SHARDPACK_RETURN_IF_ERROR(
      OpenDataset(location, remote, env, &dataset, /*check_manifest=*/true, /*open_view_base=*/false));
  if (dataset.view != nullptr) return OpenView(std::move(dataset.view), env, remote, reader);
  return OpenLocalDatasetReader(&dataset, remote, reader);
}

Status OpenLocalDatasetReader(OpenedDataset* dataset, const RemoteOptions& remote,
                              std::unique_ptr<DatasetReader>* reader) {
  return dataset->format->OpenReader(dataset->env, dataset->dir,
                                     std::make_shared<const CompactManifest>(std::move(dataset->manifest)), remote,
                                     reader);
}

Status DatasetReader::OpenShards(const std::vector<std::string>& paths, Env* env,
                                 std::unique_ptr<DatasetReader>* reader, const RemoteOptions& remote) {
  if (env == nullptr) env = Env::Default();
  if (paths.empty()) return Status::InvalidArgument("no shards to open");
  return ShardListFormat().OpenShardList(env, paths, remote, reader);
}

}  // namespace shardpack
