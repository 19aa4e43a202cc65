// Downloading one file of a remote dataset, checked against the XXH64 its manifest lists, so that
// nothing damaged is ever read or published: into the cache folder (a temporary name, then a
// rename), or into memory (streaming mode).
#pragma once

#include <cstdint>
#include <string>

#include "ground/shard_buffer.h"
#include "shardpack/env.h"
#include "shardpack/status.h"
#include "storage/cache_folder.h"
#include "storage/http/http_client.h"

namespace shardpack {

// Fetches url into `path` through a temporary file of this process, synced and checked against
// `xxh64` (when not empty) before it takes the name. A download whose bytes do not match is
// repeated (a proxy or a network that damaged them); DataLoss naming the URL when they keep
// failing (the server holds a damaged copy). The temporary file is created new (never through a
// name found there) with modes.file(); with a checksum the result is recorded as checked
// (RecordCheckedCopy). A body longer than `max_bytes` (the size the manifest lists; 0: no size
// known, the client's max_body_bytes holds it) is stopped at the first byte past it, not hashed to
// the end: IOError naming the URL and the size.
Status DownloadToFile(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                      const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes);

// As DownloadToFile, into *bytes (emptied first).
Status DownloadToMemory(HttpClient* http, const std::string& url, const std::string& xxh64, uint64_t max_bytes,
                        ShardBuffer* bytes);

// `path` in a cache folder that several processes share: downloaded (DownloadToFile) unless it
// holds `xxh64` by its record of checks (IsCheckedCopy); a copy found without a valid record is
// hashed and kept, or removed and downloaded again. A lock beside it (`path`.lock) makes the
// processes that want it at once wait for the one that downloads or hashes it, so that each file
// is downloaded, and checked, once per machine. Without a checksum (shard lists) a file there is
// taken as it is.
Status FetchIntoCache(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                      const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes);

// FetchIntoCache's work for a caller that holds `path`.lock already (SharedCacheSpace::Reserve).
Status FetchIntoCacheLocked(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                            const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes);

// Whether `path` may be served as it is: checked (IsCheckedCopy), or, without a checksum, there.
bool IsUsableCopy(Env* env, const std::string& path, const std::string& xxh64);

}  // namespace shardpack
