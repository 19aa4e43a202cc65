// Remote datasets: a packed dataset folder behind http://, https:// or s3://. Its files are
// downloaded into a local cache folder, each checked against the manifest's XXH64 before it is
// published (a temporary name, then a rename), the small files (indexes, sample tables) before the
// manifest, so that a cached copy with the server's manifest holds them all, checked. verify, stat
// and convert download the shards too, before they start (ResolveDatasetLocation); the reader and
// the loader fetch shards as they go (ops/read/remote_dataset_reader.h).
//
// s3:// locations are read over the S3 API, signed (storage/s3/s3_backend.cc). Shard lists of URLs
// ("https://host/train-{000000..000009}.tar", as webdataset takes them) are cached whole, without
// a manifest's checksums, and so is the output of pipe:COMMAND entries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/cache_folder.h"
#include "storage/http/http_client.h"
#include "storage/location.h"

namespace shardpack {

// The most bytes a manifest, index or sample table may have: the bound of their downloads (the
// manifest lists no sizes of them).
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t(1) << 30;

// The environment variable that names the cache folder (read by the CLI and Python; messages name it).
inline constexpr char kCacheEnvVar[] = "SHARDPACK_CACHE";

// `name` is a file name a manifest lists: relative, inside the dataset (no "..", no absolute path,
// no URL, no backslash). Otherwise DataLoss naming it: a manifest must not send a reader elsewhere.
Status CheckDatasetFileName(const std::string& name);

// The URL of dataset file `name` (checked by CheckDatasetFileName) under `base`, the name encoded
// (storage/url.h): a name with a space, '+' or non-ASCII is requested, and signed, as what it is.
std::string RemoteFileUrl(const std::string& base, const std::string& name);

// Where and how to read a location: its URL for the client (without user:password@, which goes into
// the client's options), the cache folder (RemoteOptions::cache_dir; may be empty; private unless
// cache_team), the client's options (HttpOptions, with what RemoteOptions::http sets over its
// defaults; signing for s3://, InvalidArgument without credentials) and the backend's client.
struct RemoteAccess {
  std::string url;
  std::string cache_dir;
  CacheModes cache_modes;
  HttpOptions http;
  std::function<std::unique_ptr<HttpClient>()> new_client;
};
Status PrepareRemoteAccess(const Location& location, const RemoteOptions& options, RemoteAccess* access);

// A dataset's manifest as the server has it: checked (its self-checksum, and that every file it
// lists lies inside the dataset, CheckDatasetFileName), with the URL its files lie under.
struct RemoteManifest {
  std::string base;  // the dataset's URL, without a trailing slash
  std::string text;
  Manifest manifest;
  std::vector<SideFile> shard_files() const;
  std::vector<SideFile> small_files() const;  // indexes, sample tables, other side files
};
Status FetchRemoteManifest(const std::string& url, HttpClient* http, RemoteManifest* remote);
// Calls `visit` with each small file of the manifest (RemoteManifest::small_files), without a copy.
void ForEachSmallFile(const Manifest& manifest, const std::function<void(const SideFile&)>& visit);
// The same for one shard: its index, its sample table, then its side files, in the manifest's order.
void ForEachSmallFile(const ShardEntry& shard, const std::function<void(const SideFile&)>& visit);

// Downloads what the cache lacks of the dataset's small files and shards into
// cache_root/<name>-<hash of url>/ (both folders checked: PrepareCacheFolder), sets *local_dir to
// that folder, and writes the manifest there. A copy of another version of the
// dataset is brought up to date: its files that differ are removed. Files found without a valid
// record of their check are hashed before they are used (IsCheckedCopy).
Status CacheRemoteDataset(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                          Env* env, HttpClient* http, std::string* local_dir);
// The dataset's folder in the cache, cache_root/<name>-<hash of url>/, made and checked
// (PrepareCacheFolder) without fetching anything: for a reader that fetches each file when it
// first reads it, checked against the manifest's checksum (RemoteDatasetEnv's small files).
Status PrepareRemoteDatasetFolder(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                                  Env* env, std::string* local_dir);

// One shard of a remote shard list: the URL its client fetches, or the command whose output it is
// (a pipe: entry); `name` says it in messages and names its cached copy (BaseName).
struct RemoteShardSource {
  std::string name;
  std::string url;
  std::string command;
};
// A shard list's entries (shardpack/shard_spec.h), expanded and each resolved by its backend.
Status ShardSources(const Location& spec, const RemoteOptions& options, std::vector<RemoteShardSource>* shards);

// Downloads `shards` (WebDataset tar shards of any tool) into one cache folder, each under a
// temporary name until complete, and sets *local_paths to them in the same order.
Status CacheRemoteShards(const std::vector<RemoteShardSource>& shards, const std::string& cache_root,
                         const CacheModes& modes, Env* env, HttpClient* http, std::vector<std::string>* local_paths);

// A shard list, expanded: local paths as they are, remote shards cached (CacheRemoteShards, into
// RemoteOptions::cache_dir, which they need) and their local copies.
Status ResolveShardList(const Location& spec, const RemoteOptions& options, Env* env,
                        std::vector<std::string>* local_paths);

// A dataset location: a local folder is returned as it is; a remote one is cached whole
// (CacheRemoteDataset, into RemoteOptions::cache_dir, which it needs) and its local copy returned.
Status ResolveDatasetLocation(const Location& location, const RemoteOptions& options, Env* env, std::string* local_dir);

}  // namespace shardpack
