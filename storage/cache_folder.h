// The local cache folder of remote datasets (docs/remote.md): private to its user unless a team
// shares it on purpose, never on a network file system, and holding only bytes that were checked
// against the manifest's XXH64.
//
// Why the checks: on a shared node another user may create the folder first (a predictable name
// such as /tmp/$SLURM_JOB_ID-cache), plant files or symbolic links in it, or read private data from
// it. Why the record: eight ranks opening one large cache must not each re-hash every shard, yet a
// file changed since it was checked (a flipped byte, a planted copy of the same size) must never be
// served.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

// The variable that opts a cache folder into team sharing: SHARDPACK_CACHE_TEAM=1.
inline constexpr char kCacheTeamEnvVar[] = "SHARDPACK_CACHE_TEAM";

// Modes of what the cache creates: private (0700 folders, 0600 files), or a team's (group folders
// with the set-group-ID bit, so that every file takes the folder's group; group-readable and
// -writable files).
struct CacheModes {
  bool team = false;
  uint32_t dir() const { return team ? 02770 : 0700; }
  uint32_t file() const { return team ? 0660 : 0600; }
  // A check's record is its user's alone: never group-writable, or a team member could rewrite it
  // to vouch for a file they planted.
  uint32_t record() const { return team ? 0640 : 0600; }
};

// Creates `dir` when missing (its parents as ordinary folders, `dir` itself with modes.dir()) and
// checks that it can be trusted: a folder, not a symbolic link, on a local file system, owned by
// this user (team: or by one of this user's groups), and not writable by every user.
// InvalidArgument naming the folder, what is wrong and the fix otherwise.
Status PrepareCacheFolder(Env* env, const std::string& dir, const CacheModes& modes);

// As PrepareCacheFolder for a folder inside a checked cache folder, and every folder between them
// (a file name of the manifest may hold a folder: "train/shard-000000.tar").
Status PrepareCacheSubfolders(Env* env, const std::string& cache_dir, const std::string& dir, const CacheModes& modes);

// Whether `path` holds the bytes whose XXH64 is `xxh64` according to the record of its last check
// by this user (`path`.checked-UID: the hash, size, device, inode, mtime and ctime in ns), without
// reading it: a regular file whose every one of these still matches. A file written, replaced or
// touched since has another ctime, which no user can set back. Only a record this user wrote is
// trusted (owned by this user, writable by nobody else): anything else is hashed again.
bool IsCheckedCopy(Env* env, const std::string& path, const std::string& xxh64);

// As IsCheckedCopy for the file `file` has open (read through fstat, not the path, so that a name
// swapped between the open and the check cannot pass). Envs whose files cannot describe
// themselves fall back to the path.
bool IsCheckedOpenCopy(Env* env, const std::string& path, const RandomAccessFile& file, const std::string& xxh64);

// Opens a cached copy for reading and checks that the opened file is the checked one: what every
// reopen of a cached shard goes through (between epochs, after another process let it go).
// DataLoss when it is not (then fetch it again, which hashes or replaces it).
Status OpenCheckedCopy(Env* env, const std::string& path, const std::string& xxh64,
                       std::unique_ptr<RandomAccessFile>* file);

// Records that `path` (a regular file) was found to hold `xxh64` just now.
Status RecordCheckedCopy(Env* env, const std::string& path, const std::string& xxh64, const CacheModes& modes);

// For a name found in the cache with no valid record: hashes it when it is a regular file, records
// it and sets *good when it holds `xxh64`; removes it (a link itself, never what it points to),
// with its record, when it does not. Callers hold the file's lock, so that one process hashes it.
Status CheckCachedCopy(Env* env, const std::string& path, const std::string& xxh64, const CacheModes& modes,
                       bool* good);

// Writes `contents` to `path` in a cache folder: a new temporary file with modes.file() (never
// one found under that name), synced when `sync`, then renamed into place.
Status WriteCacheFile(Env* env, const std::string& path, std::string_view contents, const CacheModes& modes, bool sync);
Status WriteCacheFileWithMode(Env* env, const std::string& path, std::string_view contents, uint32_t mode, bool sync);
// The same for contents in pieces, written one after another (no copy that joins them).
Status WriteCacheFilePieces(Env* env, const std::string& path, const std::vector<std::string_view>& pieces,
                            uint32_t mode, bool sync);

// Removes a cached file and its record (a missing one is no error).
void RemoveCachedCopy(Env* env, const std::string& path);

}  // namespace shardpack
