// Remote datasets: a packed dataset folder behind http://, https:// or s3://. Its files are
// downloaded into a local cache folder, each checked against the manifest's XXH64 before it is
// published (a temporary name, then a rename), the small files (indexes, sample tables) before the
// manifest, so that a cached copy with the server's manifest holds them all, checked. verify, stat
// and convert download the shards too, before they start (ResolveDatasetLocation); the reader and
// the loader fetch shards as they go (ops/remote_dataset_reader.h).
//
// s3:// locations are read over the S3 API, signed (S3ToHttpUrl). Shard lists of URLs
// ("https://host/train-{000000..000009}.tar", as webdataset takes them) are cached whole, without
// a manifest's checksums, and so is the output of pipe:COMMAND entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ground/http_client.h"
#include "ops/cache_folder.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

// The most bytes a manifest, index or sample table may have: the bound of their downloads (the
// manifest lists no sizes of them).
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t(1) << 30;

// The environment variable that names the cache folder.
inline constexpr char kCacheEnvVar[] = "SHARDPACK_CACHE";

// http://, https:// or s3://.
bool IsRemoteLocation(const std::string& location);

// s3://BUCKET/KEY as the HTTP(S) URL that serves it: $AWS_ENDPOINT_URL/BUCKET/KEY for S3-compatible
// stores (path-style), else https://BUCKET.s3.REGION.amazonaws.com/KEY (virtual-hosted; path-style
// with SHARDPACK_S3_PATH_STYLE=1), REGION from $AWS_REGION or $AWS_DEFAULT_REGION (us-east-1).
// Other URLs are returned as they are. Requests to it are signed (AWS Signature V4, by libcurl)
// with $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY and $AWS_SESSION_TOKEN.
Status S3ToHttpUrl(const std::string& s3_url, std::string* http_url);

// `name` is a file name a manifest lists: relative, inside the dataset (no "..", no absolute path,
// no URL, no backslash). Otherwise DataLoss naming it: a manifest must not send a reader elsewhere.
Status CheckDatasetFileName(const std::string& name);

// The URL of dataset file `name` (checked by CheckDatasetFileName) under `base`, the name encoded
// (ground/url.h): a name with a space, '+' or non-ASCII is requested, and signed, as what it is.
std::string RemoteFileUrl(const std::string& base, const std::string& name);

// Where and how to read a location: its HTTP(S) URL (without user:password@, which goes into the
// client's options), the cache folder (`cache_dir`, else $SHARDPACK_CACHE; may end up empty;
// private unless $SHARDPACK_CACHE_TEAM=1) and the client's options (HttpOptions; the
// SHARDPACK_HTTP_* variables docs/remote.md lists override its defaults), signing for s3://
// (InvalidArgument without credentials).
struct RemoteAccess {
  std::string url;
  std::string cache_dir;
  CacheModes cache_modes;
  HttpOptions http;
};
Status PrepareRemoteAccess(const std::string& location, const std::string& cache_dir, RemoteAccess* access);

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

// Downloads what the cache lacks of the dataset's small files (and, with_shards, of its shards)
// into cache_root/<name>-<hash of url>/ (both folders checked: PrepareCacheFolder), sets
// *local_dir to that folder, and writes the manifest there. A copy of another version of the
// dataset is brought up to date: its files that differ are removed. Files found without a valid
// record of their check are hashed before they are used (IsCheckedCopy).
Status CacheRemoteDataset(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                          bool with_shards, Env* env, HttpClient* http, std::string* local_dir);

// Downloads the shards at `urls` (WebDataset tar shards of any tool) into one cache folder, each
// under a temporary name until complete, and sets *local_paths to them in the same order.
Status CacheRemoteShards(const std::vector<std::string>& urls, const std::string& cache_root, const CacheModes& modes,
                         Env* env, HttpClient* http, std::vector<std::string>* local_paths);

// A shard list (shardpack/shard_spec.h) as a user gives it, expanded: local paths as they are,
// URLs cached (CacheRemoteShards, $SHARDPACK_CACHE) and their local copies.
Status ResolveShardList(const std::string& spec, Env* env, std::vector<std::string>* local_paths);

// A dataset location as a user gives it: a local path is returned as it is; a URL is cached whole
// (CacheRemoteDataset, the cache folder from $SHARDPACK_CACHE) and its local copy returned.
Status ResolveDatasetLocation(const std::string& location, Env* env, std::string* local_dir);

}  // namespace shardpack
