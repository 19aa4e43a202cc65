#include "ops/read/remote_dataset_reader.h"

#include <limits>

#include "formats/registry/registry.h"
#include "ground/checksum.h"
#include "ops/read/forwarding_dataset_reader.h"
#include "shardpack/shard_spec.h"
#include "storage/anchored_env.h"
#include "storage/http/http_range_file.h"
#include "storage/remote_dataset.h"
#include "storage/remote_dataset_env.h"
#include "storage/remote_shard_store.h"
#include "storage/shard_download.h"
#include "storage/url.h"

namespace shardpack {
namespace {

constexpr uint64_t kStreamPrefetchBytes = uint64_t(1) << 30;

// A format's reader over a RemoteDatasetEnv, which passes the reader's plan to the store.
class RemoteDatasetReader final : public ForwardingDatasetReader {
 public:
  // The reader reads through the Env, which reads through the store: both are kept until the
  // reader is gone.
  // ranged: the reads go to the server a range at a time, and the store is not used.
  RemoteDatasetReader(std::shared_ptr<RemoteShardStore> store, std::unique_ptr<Env> env,
                      std::unique_ptr<DatasetReader> reader, std::unique_ptr<Env> cache_env, bool ranged)
      : ForwardingDatasetReader(std::move(reader),
                                std::make_shared<Owned>(Owned{std::move(cache_env), store, std::move(env)})),
        store_(std::move(store)),
        ranged_(ranged) {}

  bool wants_read_plan() const override { return !ranged_; }
  void PlanReads(std::vector<ShardUse> uses, uint64_t position) override { store_->Plan(uses, position); }
  void ReachedPosition(uint64_t position) override { store_->Reached(position); }

 private:
  struct Owned {
    std::unique_ptr<Env> cache_env;  // the cache folder as opened (AnchorEnvAt): what the store reads through
    std::shared_ptr<RemoteShardStore> store;
    std::unique_ptr<Env> env;
  };
  const std::shared_ptr<RemoteShardStore> store_;
  const bool ranged_;
};

Status NoCacheError(const std::string& location, const Format& format) {
  if (!format.reads_shards_through_env()) {
    return Status::InvalidArgument("reading " + location + " needs a local cache folder (the " +
                                   std::string(format.name()) + " format is one file, read at random): set " +
                                   kCacheEnvVar + "=DIR (or --cache-dir DIR) with room for the dataset");
  }
  return Status::InvalidArgument("reading " + location + " at random needs a local cache folder: set " + kCacheEnvVar +
                                 "=DIR (or --cache-dir DIR; --cache-limit bounds it), or stream it without "
                                 "one with the streaming shuffle (--shuffle-buffer N) or without shuffling");
}

}  // namespace

Status OpenRemoteDatasetReader(const Location& location, Env* env, const RemoteOptions& options,
                               std::unique_ptr<DatasetReader>* reader) {
  return OpenRemoteDatasetReader(location, env, options, nullptr, reader);
}

Status OpenRemoteDatasetReader(const Location& location, Env* env, const RemoteOptions& options,
                               RemoteShardStore::NewClient new_client, std::unique_ptr<DatasetReader>* reader) {
  RemoteAccess access;
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, options, &access));
  if (new_client == nullptr) new_client = access.new_client;
  std::unique_ptr<HttpClient> http = new_client();
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormatOf(location.text, remote.manifest, &format));
  const bool streaming = access.cache_dir.empty();
  if (streaming && !format->reads_shards_through_env()) return NoCacheError(location.text, *format);
  // Random reads without a cache folder: each read asks the server for its bytes alone (HTTP
  // range requests), shards and their small files alike. The files are never downloaded whole,
  // so the first batch of a global shuffle costs its samples' bytes, not their shards'.
  const bool ranged = streaming && !options.sequential;

  std::string dir = remote.base;  // streaming: errors name the URLs of the files
  std::unique_ptr<Env> cache_env;
  if (!streaming) {
    if (!format->reads_shards_through_env()) {  // LMDB: the whole dataset into the cache first
      SHARDPACK_RETURN_IF_ERROR(
          CacheRemoteDataset(remote, access.cache_dir, access.cache_modes, env, http.get(), &dir));
      return format->OpenReader(env, dir, std::make_shared<const CompactManifest>(std::move(remote.manifest)), options,
                                reader);
    }
    SHARDPACK_RETURN_IF_ERROR(PrepareRemoteDatasetFolder(remote, access.cache_dir, access.cache_modes, env, &dir));
    // From here on the dataset's cache folder is reached through the folder checked and opened
    // now, never through its name again (storage/anchored_env.h).
    const Status anchored = AnchorEnvAt(env, dir, &cache_env);
    if (!anchored.ok() && anchored.code() != Status::Code::kUnsupported) return anchored;
    if (cache_env != nullptr) env = cache_env.get();
  }
  // The small files (indexes, sample tables, side files) are fetched when the reader first reads
  // them, which it does when it first needs their shard: opening costs the manifest's request
  // alone, not two a shard (200,000 before the first batch of a dataset of 100,000 shards).
  // Cached: into the folder, once for the node (FetchIntoCache: under the file's lock, a checked
  // copy used as it is); streaming: into memory, for the read that asked.
  // Found by name (RemoteFiles) and named again by the reader's own shard table: a shard's small
  // files are numbered by the shard, the manifest by the shard count.
  if (remote.manifest.shards.size() >= std::numeric_limits<uint32_t>::max()) {
    return Status::InvalidArgument(location.text + ": the manifest lists " +
                                   std::to_string(remote.manifest.shards.size()) +
                                   " shards; at most 2^32 - 2 are read");
  }
  const uint32_t manifest_number = uint32_t(remote.manifest.shards.size());
  RemoteFiles files;
  files.dir = dir;
  for (size_t i = 0; i < remote.manifest.shards.size(); ++i) {
    ForEachSmallFile(remote.manifest.shards[i], [&](const SideFile& f) { files.small.Add(f.file, uint32_t(i)); });
  }
  // Streaming: the manifest too, fetched again should anything read it (the readers were handed it
  // parsed) and held to the bytes read now, instead of its text kept (34 MB at 100,000 shards).
  const SideFile manifest_file{kManifestFileName, ChecksumHex(Xxh64(remote.text))};
  if (streaming) files.small.Add(manifest_file.file, manifest_number);
  files.small.Seal();
  std::string().swap(remote.text);
  uint64_t largest = 1;
  for (const ShardEntry& s : remote.manifest.shards) largest = std::max(largest, s.bytes);
  // From here on the shard list is the compact one the reader keeps, shared with the store and the
  // Env (a few hundred bytes a shard for all three, not a copy each).
  auto manifest = std::make_shared<const CompactManifest>(std::move(remote.manifest));
  files.small_file = [manifest, manifest_file, manifest_number](uint32_t number, std::string_view name,
                                                                SideFile* file) {
    bool found = false;
    if (number == manifest_number) {
      found = name == manifest_file.file;
      if (found) *file = manifest_file;
      return found;
    }
    ForEachSmallFile(manifest->shards.entry(number), [&](const SideFile& f) {
      if (!found && f.file == name) *file = f, found = true;
    });
    return found;
  };
  const CacheModes modes = access.cache_modes;
  RemoteDatasetEnv::FetchSmall fetch_small = [streaming, new_client, env, dir, modes, base = remote.base](
                                                 const std::string& path, const SideFile& f,
                                                 std::shared_ptr<const ShardBuffer>* bytes) {
    const std::string url = RemoteFileUrl(base, f.file);
    std::unique_ptr<HttpClient> client = new_client();
    if (streaming) {
      auto buffer = std::make_shared<ShardBuffer>();
      SHARDPACK_RETURN_IF_ERROR(DownloadToMemory(client.get(), url, f.xxh64, kMaxSmallFileBytes, buffer.get()));
      *bytes = std::move(buffer);
      return Status::OK();
    }
    SHARDPACK_RETURN_IF_ERROR(PrepareCacheSubfolders(env, dir, path.substr(0, path.find_last_of('/')), modes));
    return FetchIntoCache(env, client.get(), url, path, f.xxh64, kMaxSmallFileBytes, modes);
  };

  std::shared_ptr<const RemoteShardList> shards = NewManifestShardList(remote.base, streaming ? "" : dir, manifest);
  files.shards.Reserve(shards->size());
  for (size_t i = 0; i < shards->size(); ++i) files.shards.Add(shards->name(i), uint32_t(i));
  files.shards.Seal();
  ShardStoreOptions store_options;
  store_options.cache_limit = options.cache_limit;
  store_options.modes = access.cache_modes;
  store_options.cache_dir = dir;
  store_options.downloads = std::max<uint32_t>(1, options.downloads);
  store_options.prefetch_shards = options.prefetch_shards > 0 ? options.prefetch_shards : 2 * store_options.downloads;
  if (streaming && options.prefetch_shards == 0) {
    // Streamed shards are memory: by default the window ahead holds at most kStreamPrefetchBytes of
    // them (at least one shard), so that large shards do not fill the node.
    const uint64_t fit = std::max<uint64_t>(1, kStreamPrefetchBytes / largest);
    store_options.prefetch_shards = uint32_t(std::min<uint64_t>(store_options.prefetch_shards, fit));
  }
  if (!streaming && options.cache_limit > 0 && options.prefetch_shards == 0) {
    // Under a cache limit, by default the window ahead holds at most a quarter of it (at least one
    // shard), and no more downloads run at once than it holds: the rest of the limit is for the
    // shards being read, those a slower rank of the node still reads, and the streaming shuffle's
    // drains. A deeper window fills the folder with shards needed later, and a reader waiting for
    // its shard then evicts one another rank reads now, which comes again: 8 ranks under a limit
    // of a quarter made 262 downloads of 31 shards x 2 epochs with 8 ahead and 4 at once, 64-67
    // with one and one (docs/remote.md).
    const uint64_t fit = std::max<uint64_t>(1, options.cache_limit / 4 / largest);
    store_options.prefetch_shards = uint32_t(std::min<uint64_t>(store_options.prefetch_shards, fit));
    store_options.downloads = std::min(store_options.downloads, store_options.prefetch_shards);
  }
  if (ranged) store_options.downloads = 1;  // idle: nothing is downloaded whole
  RemoteDatasetEnv::OpenRanged open_ranged;
  if (ranged) {
    open_ranged = [clients = std::make_shared<HttpClientPool>(new_client), base = remote.base, shards](
                      size_t shard, const SideFile* small, const std::string& path,
                      std::unique_ptr<RandomAccessFile>* file) {
      *file = small != nullptr
                  ? NewHttpRangeFile(clients, RemoteFileUrl(base, small->file), path, kUnknownSize, kMaxSmallFileBytes)
                  : NewHttpRangeFile(clients, shards->shard(shard).url, path, shards->bytes(shard));
      return Status::OK();
    };
  }
  auto store = std::make_shared<RemoteShardStore>(env, std::move(shards), store_options, new_client);
  auto remote_env = std::make_unique<RemoteDatasetEnv>(env, store, std::move(files), nullptr, std::move(fetch_small),
                                                       std::move(open_ranged));
  std::unique_ptr<DatasetReader> format_reader;
  SHARDPACK_RETURN_IF_ERROR(format->OpenReader(remote_env.get(), dir, std::move(manifest), options, &format_reader));
  *reader = std::make_unique<RemoteDatasetReader>(std::move(store), std::move(remote_env), std::move(format_reader),
                                                  std::move(cache_env), ranged);
  return Status::OK();
}

Status OpenStreamedShardList(const Location& spec, Env* env, const RemoteOptions& options,
                             std::unique_ptr<DatasetReader>* reader) {
  RemoteAccess access;
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(spec, options, &access));
  if (!options.sequential) {
    return Status::InvalidArgument("reading " + spec.text + " at random needs a local cache folder: set " +
                                   kCacheEnvVar +
                                   "=DIR (or --cache-dir DIR; --cache-limit bounds it), or stream it without "
                                   "one with the streaming shuffle (--shuffle-buffer N) or without shuffling");
  }
  std::vector<RemoteShardSource> sources;
  SHARDPACK_RETURN_IF_ERROR(ShardSources(spec, options, &sources));
  std::vector<std::string> urls;
  for (const RemoteShardSource& source : sources) {
    if (!source.command.empty()) {  // its output is saved whole, as a shard file
      return Status::InvalidArgument("reading " + spec.shown + " needs a local cache folder for its pipe: entry (" +
                                     source.name + "): set " + kCacheEnvVar + "=DIR");
    }
    urls.push_back(source.url);
  }
  // No manifest: no sizes or checksums to hold the shards to (libcurl holds each body to the length
  // the server announced).
  std::vector<RemoteShard> shards;
  for (const std::string& u : urls) shards.push_back({u, "", 0, ""});
  ShardStoreOptions store_options;
  store_options.downloads = std::max<uint32_t>(1, options.downloads);
  store_options.prefetch_shards = options.prefetch_shards > 0 ? options.prefetch_shards : 2 * store_options.downloads;
  const RemoteShardStore::NewClient new_client = access.new_client;
  auto store = std::make_shared<RemoteShardStore>(env, std::move(shards), store_options, new_client);
  // Indexing reads each shard's tar headers front to back: each downloaded into memory for that
  // alone and dropped, one at a time, before the epoch streams them again.
  auto fetch_whole = [urls, new_client](size_t shard, std::shared_ptr<const ShardBuffer>* bytes) {
    auto buffer = std::make_shared<ShardBuffer>();
    std::unique_ptr<HttpClient> http = new_client();
    SHARDPACK_RETURN_IF_ERROR(DownloadToMemory(http.get(), urls[shard], "", 0, buffer.get()));
    *bytes = std::move(buffer);
    return Status::OK();
  };
  RemoteFiles files;  // (named by their URLs: no folder)
  for (size_t i = 0; i < urls.size(); ++i) files.shards.Add(urls[i], uint32_t(i));
  files.shards.Seal();
  auto remote_env = std::make_unique<RemoteDatasetEnv>(env, store, std::move(files), fetch_whole);
  std::unique_ptr<DatasetReader> format_reader;
  SHARDPACK_RETURN_IF_ERROR(DatasetReader::OpenShards(urls, remote_env.get(), &format_reader, options));
  *reader = std::make_unique<RemoteDatasetReader>(std::move(store), std::move(remote_env), std::move(format_reader),
                                                  nullptr, /*ranged=*/false);
  return Status::OK();
}

}  // namespace shardpack
