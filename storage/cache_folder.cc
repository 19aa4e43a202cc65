#include "storage/cache_folder.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

// Each user keeps records of their own ("<file>.checked-<uid>"): a record is trusted only when this
// user wrote it (below), so users of a team cache would otherwise replace each other's records and
// re-hash in turn.
std::string RecordPath(const std::string& path) { return path + ".checked-" + std::to_string(::geteuid()); }

// The record of `path`, when this user wrote it and nobody else can have changed it since: a regular
// file (not a link), owned by this user, writable by nobody else. Whoever can write in the folder
// (a team's group, or the owner of a folder above a private cache) can put a record there, and
// can write its size, inode and times to match a file they planted; they cannot make a file owned
// by another user, nor write to one that is not group- or world-writable. The second look catches
// a record swapped in while it was read: a rename changes the ctime of the file it moves.
bool ReadOwnRecord(Env* env, const std::string& path, std::string* record) {
  const std::string name = RecordPath(path);
  FileStat before, after;
  if (!env->StatPath(name, &before).ok() || before.type != FileStat::Type::kFile) return false;
  if (before.uid != uint32_t(::geteuid()) || (before.mode & 0022) != 0) return false;
  if (!env->ReadFile(name, kMaxRecordBytes, record).ok()) return false;
  if (!env->StatPath(name, &after).ok()) return false;
  return after.inode == before.inode && after.device == before.device && after.ctime_ns == before.ctime_ns;
}

std::string RecordText(const std::string& xxh64, const FileStat& st) {
  return xxh64 + " " + std::to_string(st.size) + " " + std::to_string(st.device) + " " + std::to_string(st.inode) +
         " " + std::to_string(st.mtime_ns) + " " + std::to_string(st.ctime_ns) + "\n";
}

// One folder above a cache folder (`dir`), as StatPath described it: who owns it and who may write
// in it decides who could rename the cache folder away and put one of their own in its place. "" when
// it is safe: owned by root or this user (a team's: or of one of this user's groups), and writable by
// nobody else unless its sticky bit keeps them from renaming what is not theirs (/tmp).
std::string UnsafeFolderAbove(const std::string& dir, const std::string& folder, const FileStat& st,
                              const CacheModes& modes) {
  const uint32_t me = uint32_t(::geteuid());
  const std::string lies = "the cache folder " + dir + " lies in " + folder;
  const std::string fix =
      "; use a cache folder inside folders only you (and root) can change, such as your home or a folder of "
      "yours in /tmp (docs/remote.md)";
  const bool team_group = modes.team && InOneOfMyGroups(st.gid);
  if (st.uid != 0 && st.uid != me && !team_group) {
    return lies + ", which belongs to user " + std::to_string(st.uid) +
           ": refused (its owner could put a folder of theirs in the cache folder's place)" + fix;
  }
  const bool sticky = (st.mode & 01000) != 0;
  const bool others_write = (st.mode & 0002) != 0;
  // A group's write is another user's unless the group is this user's own (Debian's user private
  // groups), or, for a team cache, one of this user's groups.
  const bool group_write = (st.mode & 0020) != 0 && st.gid != uint32_t(::getegid()) && !team_group;
  if ((others_write || group_write) && !sticky) {
    return lies + ", which " + (others_write ? "every user" : "group " + std::to_string(st.gid)) +
           " may write in (mode " + Octal(st.mode) +
           ", no sticky bit): refused (they could put a folder of theirs in the cache folder's place)" + fix;
  }
  return "";
}

// Every folder above `dir`, as written and as resolved (a symbolic link on the way is itself a
// name another user could change): UnsafeFolderAbove for each, up to "/".
Status CheckFoldersAbove(Env* env, const std::string& dir, const CacheModes& modes) {
  std::string absolute = dir;
  if (absolute.empty() || absolute[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return Status::FromErrno("cannot tell the current folder", errno);
    absolute = std::string(cwd) + "/" + dir;
  }
  std::vector<std::string> paths = {absolute};
  if (char* resolved = ::realpath(absolute.c_str(), nullptr)) {
    paths.push_back(resolved);
    std::free(resolved);
  }
  for (std::string path : paths) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    for (size_t slash = path.find_last_of('/'); slash != std::string::npos; slash = path.find_last_of('/', slash - 1)) {
      const std::string folder = slash == 0 ? "/" : path.substr(0, slash);
      FileStat st;
      const Status s = env->StatPath(folder, &st);
      if (s.code() == Status::Code::kUnsupported) return Status::OK();  // an Env without owners
      if (!s.ok()) continue;  // not there yet: made by this user, below a folder checked here
      const std::string unsafe = UnsafeFolderAbove(dir, folder, st, modes);
      if (!unsafe.empty()) return Status::InvalidArgument(unsafe);
      if (slash == 0) break;
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareCacheFolder(Env* env, const std::string& dir, const CacheModes& modes) {
  // Before anything is made in them (the folders made below then are this user's).
  SHARDPACK_RETURN_IF_ERROR(CheckFoldersAbove(env, dir, modes));
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

namespace {

// Whether `st`, a description of `path`'s file, is what this user's record of its check says.
bool MatchesOwnRecord(Env* env, const std::string& path, const FileStat& st, const std::string& xxh64) {
  std::string record;
  return st.type == FileStat::Type::kFile && ReadOwnRecord(env, path, &record) && record == RecordText(xxh64, st);
}

}  // namespace

bool IsCheckedCopy(Env* env, const std::string& path, const std::string& xxh64) {
  FileStat st;
  return env->StatPath(path, &st).ok() && MatchesOwnRecord(env, path, st, xxh64);
}

bool IsCheckedOpenCopy(Env* env, const std::string& path, const RandomAccessFile& file, const std::string& xxh64) {
  FileStat st;
  const Status described = file.Stat(&st);
  if (described.code() == Status::Code::kUnsupported) return IsCheckedCopy(env, path, xxh64);
  return described.ok() && MatchesOwnRecord(env, path, st, xxh64);
}

Status OpenCheckedCopy(Env* env, const std::string& path, const std::string& xxh64,
                       std::unique_ptr<RandomAccessFile>* file) {
  std::unique_ptr<RandomAccessFile> opened;
  SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &opened));
  if (!xxh64.empty() && !IsCheckedOpenCopy(env, path, *opened, xxh64)) {
    return Status::DataLoss(path + " is not the copy that was checked (changed or replaced since)");
  }
  *file = std::move(opened);
  return Status::OK();
}

Status RecordCheckedCopy(Env* env, const std::string& path, const std::string& xxh64, const CacheModes& modes) {
  FileStat st;
  SHARDPACK_RETURN_IF_ERROR(env->StatPath(path, &st));
  // Not synced: a record lost in a machine crash costs one more hash, never trust in unchecked bytes.
  return WriteCacheFileWithMode(env, RecordPath(path), RecordText(xxh64, st), modes.record(), /*sync=*/false);
}

Status WriteCacheFile(Env* env, const std::string& path, std::string_view contents, const CacheModes& modes,
                      bool sync) {
  return WriteCacheFileWithMode(env, path, contents, modes.file(), sync);
}

Status WriteCacheFileWithMode(Env* env, const std::string& path, std::string_view contents, uint32_t mode, bool sync) {
  return WriteCacheFilePieces(env, path, {contents}, mode, sync);
}

Status WriteCacheFilePieces(Env* env, const std::string& path, const std::vector<std::string_view>& pieces,
                            uint32_t mode, bool sync) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  (void)env->RemoveFile(part);  // a leftover of a killed process with this pid, or a planted name
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewExclusiveFile(part, mode, &file));
  Status s;
  for (size_t i = 0; s.ok() && i < pieces.size(); ++i) s = file->Append(pieces[i]);
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
