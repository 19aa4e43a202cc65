#include "ops/remote_dataset_reader.h"

#include "formats/registry/registry.h"
#include "ops/remote_dataset.h"
#include "ops/remote_dataset_env.h"
#include "ops/remote_shard_store.h"
#include "ops/shard_download.h"

namespace shardpack {
namespace {

// A format's reader over a RemoteDatasetEnv, which passes the reader's plan to the store.
class RemoteDatasetReader final : public DatasetReader {
 public:
  RemoteDatasetReader(std::shared_ptr<RemoteShardStore> store, std::unique_ptr<Env> env,
                      std::unique_ptr<DatasetReader> reader)
      : DatasetReader(reader->manifest()), store_(std::move(store)), env_(std::move(env)), reader_(std::move(reader)) {}

  Status Read(uint64_t index, ReadSample* out) const override { return reader_->Read(index, out); }
  Status ReadMetadata(uint64_t index, std::string* json) const override { return reader_->ReadMetadata(index, json); }
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override {
    return reader_->ReadField(index, name, data, present);
  }
  bool wants_read_plan() const override { return true; }
  void PlanReads(std::vector<ShardUse> uses) override { store_->Plan(uses); }
  void ReachedPosition(uint64_t position) override { store_->Reached(position); }

 private:
  // Declared in the order they are needed: the reader reads through the Env, which reads through
  // the store, so the reader goes first when this is destroyed.
  const std::shared_ptr<RemoteShardStore> store_;
  const std::unique_ptr<Env> env_;
  const std::unique_ptr<DatasetReader> reader_;
};

Status NoCacheError(const std::string& location, const Format& format) {
  if (!format.reads_shards_through_env()) {
    return Status::InvalidArgument("reading " + location + " needs a local cache folder (the " +
                                   std::string(format.name()) + " format is one file, read at random): set " +
                                   kCacheEnvVar + "=DIR (or the loader's cache_dir) with room for the dataset");
  }
  return Status::InvalidArgument("reading " + location + " at random needs a local cache folder: set " + kCacheEnvVar +
                                 "=DIR (or the loader's cache_dir; cache_limit bounds it), or stream it without "
                                 "one with the streaming shuffle (shuffle_buffer=N) or without shuffling");
}

}  // namespace

Status OpenRemoteDatasetReader(const std::string& location, Env* env, const RemoteOptions& options,
                               std::unique_ptr<DatasetReader>* reader) {
  RemoteAccess access;
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, options.cache_dir, &access));
  std::unique_ptr<HttpClient> http = NewCurlHttpClient(access.http);
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormatOf(location, remote.manifest, &format));
  const bool streaming = access.cache_dir.empty();
  if (streaming && !(options.sequential && format->reads_shards_through_env())) {
    return NoCacheError(location, *format);
  }

  std::string dir = remote.base;  // streaming: errors name the URLs of the files
  std::map<std::string, std::string> memory_files;
  if (streaming) {
    memory_files[JoinPath(dir, kManifestFileName)] = remote.text;
    for (const SideFile& f : remote.small_files()) {
      ShardBuffer bytes;
      SHARDPACK_RETURN_IF_ERROR(DownloadToMemory(http.get(), remote.base + "/" + f.file, f.xxh64, &bytes));
      SHARDPACK_RETURN_IF_ERROR(bytes.ReadAll(&memory_files[JoinPath(dir, f.file)]));
    }
  } else {
    const bool with_shards = !format->reads_shards_through_env();
    SHARDPACK_RETURN_IF_ERROR(CacheRemoteDataset(remote, access.cache_dir, with_shards, env, http.get(), &dir));
    if (with_shards) return format->OpenReader(env, dir, std::move(remote.manifest), reader);
  }

  std::vector<RemoteShard> shards;
  std::vector<std::string> paths;
  std::vector<uint64_t> sizes;
  for (const ShardEntry& s : remote.manifest.shards) {
    paths.push_back(JoinPath(dir, s.file));
    sizes.push_back(s.bytes);
    shards.push_back({remote.base + "/" + s.file, streaming ? "" : paths.back(), s.bytes, s.xxh64});
  }
  ShardStoreOptions store_options;
  store_options.cache_limit = options.cache_limit;
  store_options.downloads = std::max<uint32_t>(1, options.downloads);
  store_options.prefetch_shards = options.prefetch_shards > 0 ? options.prefetch_shards : 2 * store_options.downloads;
  const HttpOptions http_options = access.http;
  auto store = std::make_shared<RemoteShardStore>(env, std::move(shards), store_options,
                                                  [http_options] { return NewCurlHttpClient(http_options); });
  auto remote_env = std::make_unique<RemoteDatasetEnv>(env, store, paths, std::move(sizes), std::move(memory_files));
  std::unique_ptr<DatasetReader> format_reader;
  SHARDPACK_RETURN_IF_ERROR(format->OpenReader(remote_env.get(), dir, std::move(remote.manifest), &format_reader));
  *reader = std::make_unique<RemoteDatasetReader>(std::move(store), std::move(remote_env), std::move(format_reader));
  return Status::OK();
}

}  // namespace shardpack
