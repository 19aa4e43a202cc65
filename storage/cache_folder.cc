#include "storage/cache_folder.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <vector>

#include "ground/checksum.h"

namespace shardpack {
namespace {

constexpr uint64_t kMaxRecordBytes = 4096;

std::string Octal(uint32_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", mode & 07777);
  return text;
}

bool InOneOfMyGroups(uint32_t gid) {
  if (gid == uint32_t(::getegid())) return true;
  const int n = ::getgroups(0, nullptr);
  std::vector<gid_t> groups(n > 0 ? size_t(n) : 0);
  if (n > 0 && ::getgroups(n, groups.data()) == n) {
    for (const gid_t g : groups) {
      if (uint32_t(g) == gid) return true;
    }
  }
  return false;
}

std::string RecordPath(const std::string& path) { return path + ".checked"; }

std::string RecordText(const std::string& xxh64, const FileStat& st) {
  return xxh64 + " " + std::to_string(st.size) + " " + std::to_string(st.device) + " " + std::to_string(st.inode) +
         " " + std::to_string(st.mtime_ns) + " " + std::to_string(st.ctime_ns) + "\n";
}

}  // namespace

Status PrepareCacheFolder(Env* env, const std::string& dir, const CacheModes& modes) {
  FileStat st;
  if (!env->StatPath(dir, &st).ok()) {
    const size_t slash = dir.find_last_of('/');
    if (slash != std::string::npos && slash > 0) SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(dir.substr(0, slash)));
    SHARDPACK_RETURN_IF_ERROR(env->CreateDir(dir, modes.dir()));
    SHARDPACK_RETURN_IF_ERROR(env->StatPath(dir, &st));
  }
  const std::string what = "the cache folder " + dir;
  if (st.type == FileStat::Type::kSymlink) {
    return Status::InvalidArgument(what +
                                   " is a symbolic link: refused (another user could point it elsewhere); give the "
                                   "folder it points to");
  }
  if (st.type != FileStat::Type::kDirectory) return Status::InvalidArgument(what + " exists and is not a folder");
  const bool mine = st.uid == uint32_t(::geteuid());
  if (!mine && !(modes.team && InOneOfMyGroups(st.gid))) {
    return Status::InvalidArgument(
        what + " belongs to user " + std::to_string(st.uid) + ", not to you (user " + std::to_string(::geteuid()) +
        "): refused (its owner could plant files in it or read yours); use a folder of your own, or, for a cache "
        "a team shares on purpose, a folder of the team's group with " +
        kCacheTeamEnvVar + "=1 (docs/remote.md)");
  }
  if ((st.mode & 0002) != 0) {
    return Status::InvalidArgument(what + " is writable by every user (mode " + Octal(st.mode) +
                                   "): refused (anyone could plant files in it); run chmod o-w on it, or use a "
                                   "folder of your own");
  }
  std::string type;
  bool network = false;
  if (env->FileSystemType(dir, &type, &network).ok() && network) {
    return Status::InvalidArgument(what + " is on a network file system (" + type +
                                   "), where the file locks that let the processes of a node share a cache do not "
                                   "hold (between machines, often not at all): refused; use a local disk (a local "
                                   "SSD, /tmp, /dev/shm)");
  }
  return Status::OK();
}

Status PrepareCacheSubfolders(Env* env, const std::string& cache_dir, const std::string& dir, const CacheModes& modes) {
  if (dir == cache_dir || dir.size() <= cache_dir.size()) return Status::OK();
  size_t next = cache_dir.size() + 1;
  for (;;) {
    const size_t slash = dir.find('/', next);
    SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, dir.substr(0, slash), modes));
    if (slash == std::string::npos) return Status::OK();
    next = slash + 1;
  }
}

bool IsCheckedCopy(Env* env, const std::string& path, const std::string& xxh64) {
  FileStat st;
  std::string record;
  if (!env->StatPath(path, &st).ok() || st.type != FileStat::Type::kFile) return false;
  if (!env->ReadFile(RecordPath(path), kMaxRecordBytes, &record).ok()) return false;
  return record == RecordText(xxh64, st);
}

Status RecordCheckedCopy(Env* env, const std::string& path, const std::string& xxh64, const CacheModes& modes) {
  FileStat st;
  SHARDPACK_RETURN_IF_ERROR(env->StatPath(path, &st));
  // Not synced: a record lost in a machine crash costs one more hash, never trust in unchecked bytes.
  return WriteCacheFile(env, RecordPath(path), RecordText(xxh64, st), modes, /*sync=*/false);
}

Status WriteCacheFile(Env* env, const std::string& path, std::string_view contents, const CacheModes& modes,
                      bool sync) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  (void)env->RemoveFile(part);  // a leftover of a killed process with this pid, or a planted name
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewExclusiveFile(part, modes.file(), &file));
  Status s = file->Append(contents);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(part, path);
  if (!s.ok()) (void)env->RemoveFile(part);
  return s;
}

Status CheckCachedCopy(Env* env, const std::string& path, const std::string& xxh64, const CacheModes& modes,
                       bool* good) {
  *good = false;
  FileStat st;
  if (!env->StatPath(path, &st).ok()) return Status::OK();  // nothing there
  if (st.type == FileStat::Type::kFile) {
    uint64_t have = 0, size = 0;
    if (ChecksumFile(env, path, &have, &size).ok() && ChecksumHex(have) == xxh64) {
      *good = true;
      return RecordCheckedCopy(env, path, xxh64, modes);
    }
  }
  RemoveCachedCopy(env, path);
  if (env->FileExists(path)) return Status::IOError("cannot remove " + path + ", which does not hold its checksum");
  return Status::OK();
}

void RemoveCachedCopy(Env* env, const std::string& path) {
  (void)env->RemoveFile(RecordPath(path));
  (void)env->RemoveFile(path);
}

}  // namespace shardpack
