// Env: the one seam through which shardpack touches the file system.
//
// Everything that reads or writes files (scanning a source tree, reading images, writing shards,
// renaming them into place, reading them back for verify) goes through an Env, so that tests can
// substitute one that fails, shortens or corrupts I/O on purpose. Env::Default() is the POSIX one.
// All methods are thread-safe; file objects are used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

// A file opened for appending. Close() (or destruction) releases it; Sync() makes written data
// durable before the caller publishes the file under its final name.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  // Overwrites bytes already appended (a header whose counts are known only at the end).
  virtual Status WriteAt(uint64_t offset, std::string_view data) = 0;
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// A file read from front to back.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into scratch; *bytes_read is 0 only at end of file.
  virtual Status Read(size_t n, char* scratch, size_t* bytes_read) = 0;
  // Moves n bytes ahead without reading them (a file that cannot seek reads and drops them).
  // Skipping past the end is not an error here; the next Read reports end of file.
  virtual Status Skip(uint64_t n);
};

struct FileStat;

// A file read at arbitrary offsets. Thread-safe: Read may be called from many threads at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads exactly n bytes at offset into scratch; DataLoss when the file ends first.
  virtual Status Read(uint64_t offset, size_t n, char* scratch) const = 0;
  // What the file system says of the file this object has open (fstat(2)), whatever its path
  // names now: what a cache checks an opened file against (its identity, size and change time).
  // Unsupported where the storage has no such notion.
  virtual Status Stat(FileStat* stat) const;
  // Its size in bytes (by default, what Stat says).
  virtual Status Size(uint64_t* size) const;
  // The bytes this object itself holds in memory (a file served from memory: its contents), for a
  // caller that keeps files open within a memory bound; 0 for a file on disk.
  virtual uint64_t memory_bytes() const { return 0; }
  // Whether each Read is a request to a server (a file at a URL read by HTTP range requests, with
  // no checked copy on this machine): a reader then reads what it needs in one piece and checks it
  // against its checksum itself.
  virtual bool reads_are_requests() const { return false; }
};

struct DirEntry {
  enum class Type { kFile, kDirectory, kOther };
  std::string name;          // a name inside the directory, never "." or ".."
  Type type = Type::kOther;  // after following symlinks; a dangling link is kOther
  bool is_symlink = false;
};

// Identifies a directory independently of the path that reached it (for symlink-loop detection).
struct FileId {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileId& o) const { return device == o.device && inode == o.inode; }
};

// What the file system says of a path itself: a symbolic link is described, never followed.
struct FileStat {
  enum class Type { kFile, kDirectory, kSymlink, kOther };
  Type type = Type::kOther;
  uint64_t size = 0;
  uint64_t device = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;  // ctime: any change to the file, which no user can set back
  uint32_t mode = 0;                   // the permission bits (07777)
  uint32_t uid = 0, gid = 0;
};

// A whole file's bytes in memory, read-only, for as long as this object lives: with the POSIX Env a
// shared mapping, whose pages every process that maps the file shares with the page cache (what a
// table kept once per node relies on); elsewhere a copy.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual std::string_view data() const = 0;
  // What the file system said of the file when it was opened (fstat(2) of the descriptor mapped).
  virtual const FileStat& stat() const = 0;
};

// A lock held on a file until destroyed (see Env::LockFile).
class FileLock {
 public:
  virtual ~FileLock() = default;
  // Lets the lock go and takes it again (waiting), the file kept open meanwhile: for a lock taken
  // over and over, as the shared cache's decisions take theirs for every download, without an
  // open each time. Unsupported where the lock cannot (then destroy it and take a new one).
  virtual Status Unlock() { return Status::Unsupported("this lock cannot be let go and kept"); }
  virtual Status Relock() { return Status::Unsupported("this lock cannot be taken again"); }
};

class Env {
 public:
  virtual ~Env() = default;
  // The process-wide POSIX Env; never deleted.
  static Env* Default();

  virtual Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) = 0;
  // For a writer that already appends in large pieces (a download): each Append reaches the kernel
  // before it returns, without the copy into NewWritableFile's chunks and their writer threads.
  virtual Status NewUnbufferedWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) {
    return NewWritableFile(path, file);
  }
  virtual Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) = 0;
  // An existing file (never through a symbolic link) to which every Append adds at its end, written
  // before Append returns, whatever other writers appended meanwhile (O_APPEND). An error when it
  // is missing; Unsupported where the Env cannot (callers then rewrite the file whole).
  virtual Status NewAppendableFile(const std::string& path, std::unique_ptr<WritableFile>* file) {
    (void)file;
    return Status::Unsupported("this Env cannot append to " + path);
  }
  virtual Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) = 0;
  // Maps a regular file (never through a symbolic link) for reading; by default, reads it whole.
  virtual Status MapFile(const std::string& path, std::unique_ptr<MappedFile>* file);
  // Reads a whole file; fails with InvalidArgument when it holds more than max_bytes.
  virtual Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) = 0;
  virtual Status ListDir(const std::string& path, std::vector<DirEntry>* entries) = 0;
  virtual Status GetFileId(const std::string& path, FileId* id) = 0;
  virtual Status GetFileSize(const std::string& path, uint64_t* size) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // Creates the directory and its parents; OK when it already exists.
  virtual Status CreateDirs(const std::string& path) = 0;
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // Removes an empty folder (a failed pack's OUT that it made); Unsupported where folders are not
  // things of their own (an object store's prefix).
  virtual Status RemoveEmptyDir(const std::string& path) {
    return Status::Unsupported("this Env does not remove folders (" + path + ")");
  }
  // Makes a rename inside the directory durable.
  virtual Status SyncDir(const std::string& path) = 0;
  // The XXH64 that the storage keeps beside the file (an object store's metadata), as 16 hex
  // digits, so that a file can be checked without reading it back. Unsupported where the storage
  // keeps none (local files).
  virtual Status GetStoredXxh64(const std::string& path, std::string* xxh64) {
    (void)xxh64;
    return Status::Unsupported("no stored checksum for " + path);
  }
  // Frees what unfinished writes into folder `dir` left outside its files, for the file names
  // `owns` accepts: an object store's incomplete multipart uploads (a killed or failed run's),
  // whose parts are stored, and billed, until aborted. OK where there is nothing of the kind (a
  // local disk, whose leftovers are .tmp files).
  virtual Status FreeUnfinishedWrites(const std::string& dir, const std::function<bool(const std::string&)>& owns) {
    (void)dir;
    (void)owns;
    return Status::OK();
  }
  // Asks the operating system to drop `path`'s cached pages, so that the next read comes from the
  // storage (shardpack doctor --cold). Only clean pages go; nothing is written or lost. Unsupported
  // where the storage has no such cache.
  virtual Status DropCachedPages(const std::string& path) {
    return Status::Unsupported("this Env cannot drop cached pages of " + path);
  }
  // The share of `path`'s pages held in the page cache now (0 to 1), without reading the file:
  // whether reads of it will come from memory. Unsupported where the storage has no such cache.
  virtual Status CachedShare(const std::string& path, double* share) {
    *share = 0;
    return Status::Unsupported("this Env cannot tell what is cached of " + path);
  }
  // `path` itself, as lstat(2) sees it. Unsupported where the storage has no such notion.
  virtual Status StatPath(const std::string& path, FileStat* stat) {
    (void)stat;
    return Status::Unsupported("this Env cannot describe " + path);
  }
  // Creates the one folder `path` (its parent must exist) with exactly `mode`; OK when a folder is
  // there already, whose mode is then left as it is (the caller checks it with StatPath).
  virtual Status CreateDir(const std::string& path, uint32_t mode) {
    (void)mode;
    return CreateDirs(path);
  }
  // Creates `path` for unbuffered appends, with exactly `mode`, failing when anything is there
  // already, a symbolic link included (O_CREAT | O_EXCL | O_NOFOLLOW): a file that must be new,
  // in a folder others might have planted names in.
  virtual Status NewExclusiveFile(const std::string& path, uint32_t mode, std::unique_ptr<WritableFile>* file) {
    (void)mode;
    return NewUnbufferedWritableFile(path, file);
  }
  // The kind of file system `path` lies on, as Linux names it ("ext4", "xfs", "tmpfs", "nfs",
  // "lustre", ...; "unknown" for one this code does not name), and whether it is a network file
  // system, on which flock(2) does not lock between machines, or not at all.
  virtual Status FileSystemType(const std::string& path, std::string* type, bool* network) {
    *type = "unknown";
    *network = false;
    return Status::Unsupported("this Env cannot tell the file system of " + path);
  }
  // Waits for, then holds, an exclusive lock on `path` (created when missing) shared by every
  // process on this machine, until *lock is destroyed; a process that dies releases it. For work
  // that several processes might otherwise do twice (downloads into a shared cache). An Env
  // without locks answers Unsupported, and callers then go without.
  // A lock file that is missing is created with `mode` (never through a symbolic link).
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock, uint32_t mode = 0600) {
    (void)lock;
    (void)mode;
    return Status::Unsupported("this Env has no file locks (" + path + ")");
  }
  // Takes an exclusive lock on the folder `dir` itself (flock(2) of the folder: no file is made in
  // it) if no other holder stands in its way, without waiting; *acquired says whether, *lock holds
  // it until destroyed, and a process that dies releases it. One writer at a time in a dataset
  // folder (ground/dataset_lock.h). An Env without locks answers Unsupported.
  virtual Status TryLockFolder(const std::string& dir, std::unique_ptr<FileLock>* lock, bool* acquired) {
    (void)lock;
    *acquired = false;
    return Status::Unsupported("this Env has no folder locks (" + dir + ")");
  }
  // Takes a lock on `path` (created with `mode` when missing, never through a link) if no other
  // holder stands in its way, without waiting: exclusive, or shared with other shared holders.
  // *acquired says whether it was taken; *lock holds it until destroyed. Locks of one file
  // conflict between processes and between two openings in one process alike. For the shared
  // cache's pins (storage/shared_cache_space.h).
  virtual Status TryLockFile(const std::string& path, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                             uint32_t mode = 0600) {
    (void)shared;
    (void)lock;
    (void)mode;
    *acquired = false;
    return Status::Unsupported("this Env has no file locks (" + path + ")");
  }
};

// Writes `contents` to `path` atomically: a temporary file, synced (unless !sync), then renamed
// into place. Without sync the rename still makes the update atomic for a killed process (the page
// cache survives it); only a machine crash could lose it, which --no-sync accepts.
Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents, bool sync = true);

// "dir/name", without doubling the slash.
std::string JoinPath(const std::string& dir, const std::string& name);

// The last component of `path`, trailing slashes ignored: "a/b/" -> "b", "/" -> "".
std::string BaseName(std::string path);

}  // namespace shardpack
