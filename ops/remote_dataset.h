// Remote datasets (issue 14, in part): a packed dataset folder behind http://, https:// or s3://
// is read through a local cache. Its files are downloaded once into the cache folder, each checked
// against the manifest's XXH64 before it is published (a temporary name, then a rename), and the
// manifest last, so that a cached copy that has a manifest is complete and checked; the readers,
// verify and stat then read the local copy.
//
// s3:// locations are read over the S3 API, signed (S3ToHttpUrl). Shard lists of URLs
// ("https://host/train-{000000..000009}.tar", as webdataset takes them) are cached whole too,
// without a manifest's checksums, and so is the output of pipe:COMMAND entries. Not yet here
// (docs/remote.md): downloads ahead of the epoch instead of all before the first read, a cache
// size bound, streaming without a cache.
#pragma once

#include <string>
#include <vector>

#include "ground/http_client.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

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

// Downloads what the cache lacks of the dataset at `url` into cache_root/<name>-<hash of url>/ and
// sets *local_dir to that folder. A dataset cached before is reused when its manifest is the one
// the server has now; a changed one is fetched again.
Status CacheRemoteDataset(const std::string& url, const std::string& cache_root, Env* env, HttpClient* http,
                          std::string* local_dir);

// Downloads the shards at `urls` (WebDataset tar shards of any tool) into one cache folder, each
// under a temporary name until complete, and sets *local_paths to them in the same order.
Status CacheRemoteShards(const std::vector<std::string>& urls, const std::string& cache_root, Env* env,
                         HttpClient* http, std::vector<std::string>* local_paths);

// A shard list (shardpack/shard_spec.h) as a user gives it, expanded: local paths as they are,
// URLs cached (CacheRemoteShards, $SHARDPACK_CACHE) and their local copies.
Status ResolveShardList(const std::string& spec, Env* env, std::vector<std::string>* local_paths);

// A dataset location as a user gives it: a local path is returned as it is; a URL is cached
// (CacheRemoteDataset, the cache folder from $SHARDPACK_CACHE) and its local copy returned.
// $SHARDPACK_HTTP_ATTEMPTS (default 4) and $SHARDPACK_HTTP_TIMEOUT (seconds to connect, and the
// longest stall of a transfer; default 10 and 30) tune the HTTP client.
Status ResolveDatasetLocation(const std::string& location, Env* env, std::string* local_dir);

}  // namespace shardpack
