// The POSIX Env: plain open/read/write/rename, with errors turned into Status values that name the
// path and the system's reason.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <future>
#include <system_error>

#include "ground/write_back.h"
#include "ground/write_size_tuner.h"
#include "shardpack/env.h"

namespace shardpack {
namespace {

// Appends are gathered into 4 MiB chunks; a full chunk is written by a thread of its own while the
// caller fills the next one. The copy into the page cache and the start of its write-back (which
// waits whenever the disk's queue is full) are thus off the caller's path: a pack's ordered write
// stage, which otherwise spent most of its time in them. At most one chunk is in flight, so a file
// holds at most two chunks of memory. Invariant: while a chunk is in flight, only its thread touches
// fd_, written_ and started_; everything else first waits for it (Drain). An error of a background
// write is reported by the next call (Append, WriteAt, Sync or Close) and sticks.
class PosixWritableFile final : public WritableFile {
 public:
  // unbuffered: every Append is written before it returns (Env::NewUnbufferedWritableFile).
  PosixWritableFile(std::string path, int fd, bool unbuffered = false)
      : path_(std::move(path)), fd_(fd), unbuffered_(unbuffered) {}
  ~PosixWritableFile() override { (void)Close(); }

  Status Append(std::string_view data) override {
    SHARDPACK_RETURN_IF_ERROR(error_);
    if (unbuffered_) return error_ = WriteAll(data.data(), data.size());
    // The chunk's whole room at once: growing it by doubling would copy it (and touch new pages)
    // several times over, for every file.
    if (buffer_.capacity() < kChunkSize) buffer_.reserve(kChunkSize);
    while (!data.empty()) {
      const size_t n = std::min(data.size(), kChunkSize - buffer_.size());
      buffer_.append(data.data(), n);
      data.remove_prefix(n);
      if (buffer_.size() == kChunkSize) SHARDPACK_RETURN_IF_ERROR(WriteChunkInBackground());
    }
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, std::string_view data) override {
    SHARDPACK_RETURN_IF_ERROR(Flush());
    while (!data.empty()) {
      ssize_t w = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Status::FromErrno("cannot write " + path_, errno);
      data.remove_prefix(static_cast<size_t>(w));
      offset += static_cast<uint64_t>(w);
    }
    return Status::OK();
  }

  Status Sync() override {
    SHARDPACK_RETURN_IF_ERROR(Flush());
    if (::fdatasync(fd_) != 0) return Status::FromErrno("cannot sync " + path_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return error_;
    Status s = Flush();
    if (::close(fd_) != 0 && s.ok()) s = Status::FromErrno("cannot close " + path_, errno);
    fd_ = -1;
    return s;
  }

 private:
  static constexpr size_t kChunkSize = 4 << 20;
  // How much each write(2) hands the kernel is measured, not fixed: the kernel caches a write in
  // folios up to its size, and on a virtual machine what those cost depends on the host
  // (ground/write_size_tuner.h).
  static constexpr uint64_t kWritebackStep = 8 << 20;

  // Waits for the chunk in flight, if any; its error becomes this file's.
  Status Drain() {
    if (in_flight_.valid()) {
      Status s = in_flight_.get();
      if (error_.ok()) error_ = s;
    }
    return error_;
  }

  // Hands the full chunk to a thread of its own, once the previous one is written.
  Status WriteChunkInBackground() {
    SHARDPACK_RETURN_IF_ERROR(Drain());
    std::swap(buffer_, writing_);
    buffer_.clear();
    try {
      in_flight_ = std::async(std::launch::async, [this] { return WriteAll(writing_.data(), writing_.size()); });
    } catch (const std::system_error&) {  // no thread to be had: write it here
      error_ = WriteAll(writing_.data(), writing_.size());
    }
    return error_;
  }

  // Everything appended, written: the chunk in flight, then the partial one.
  Status Flush() {
    SHARDPACK_RETURN_IF_ERROR(Drain());
    error_ = WriteAll(buffer_.data(), buffer_.size());
    buffer_.clear();
    return error_;
  }

  Status WriteAll(const char* p, size_t n) {
    WriteSizeTuner& tuner = WriteSizeTuner::ForFileWrites();
    const size_t write_size = tuner.Next();
    const uint64_t bytes = n;
    const auto start = std::chrono::steady_clock::now();
    while (n > 0) {
      ssize_t w = ::write(fd_, p, std::min(n, write_size));
      if (w < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno("cannot write " + path_, errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
      written_ += static_cast<uint64_t>(w);
    }
    tuner.Record(write_size, bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    // Every full 8 MiB behind us (ground/write_back.h).
    if (written_ - started_ >= kWritebackStep)
      StartWriteBack(fd_, written_ / kWritebackStep * kWritebackStep, &started_);
    return Status::OK();
  }

  std::string path_;
  int fd_;
  const bool unbuffered_ = false;
  std::string buffer_;             // the chunk being filled
  std::string writing_;            // the chunk in flight
  std::future<Status> in_flight_;  // its write; valid while it is in flight
  Status error_;                   // the first write error; every later call returns it
  uint64_t written_ = 0;           // bytes handed to write(2)
  uint64_t started_ = 0;           // bytes whose write-back was started
};

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, char* scratch, size_t* bytes_read) override {
    for (;;) {
      ssize_t r = ::read(fd_, scratch, n);
      if (r >= 0) {
        *bytes_read = static_cast<size_t>(r);
        return Status::OK();
      }
      if (errno != EINTR) return Status::FromErrno("cannot read " + path_, errno);
    }
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) >= 0) return Status::OK();
    if (errno == ESPIPE) return SequentialFile::Skip(n);  // a pipe: read and drop
    return Status::FromErrno("cannot seek in " + path_, errno);
  }

 private:
  std::string path_;
  int fd_;
};

FileStat ToFileStat(const struct stat& st) {
  FileStat out;
  out.type = S_ISREG(st.st_mode)   ? FileStat::Type::kFile
             : S_ISDIR(st.st_mode) ? FileStat::Type::kDirectory
             : S_ISLNK(st.st_mode) ? FileStat::Type::kSymlink
                                   : FileStat::Type::kOther;
  out.size = uint64_t(st.st_size);
  out.device = uint64_t(st.st_dev);
  out.inode = uint64_t(st.st_ino);
  out.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  out.ctime_ns = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  out.mode = uint32_t(st.st_mode & 07777);
  out.uid = uint32_t(st.st_uid);
  out.gid = uint32_t(st.st_gid);
  return out;
}

// How many random-access files keep their descriptor open, within a fifth of the process's limit
// on open files (RLIMIT_NOFILE, read at each open, so a limit changed later counts). Readers keep the
// files of every shard they work on open (up to thousands), and Debian's default soft limit is
// 1,024: past the share, a file is opened for each read instead (leveldb's Env does the same), so
// that the process never runs out of descriptors for its sockets, pipes and the files it writes.
class OpenFileLimiter {
 public:
  // Takes a slot; false when a fifth of the limit is held already.
  bool Acquire() {
    const int64_t limit = Share();
    int64_t held = held_.load(std::memory_order_relaxed);
    do {
      if (held >= limit) return false;
    } while (!held_.compare_exchange_weak(held, held + 1, std::memory_order_relaxed));
    return true;
  }
  void Release() { held_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  static int64_t Share() {
    struct rlimit limit;
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return int64_t(1) << 20;
    return int64_t(limit.rlim_cur / 5);
  }
  std::atomic<int64_t> held_{0};
};

OpenFileLimiter& RandomAccessLimiter() {
  static OpenFileLimiter* limiter = new OpenFileLimiter();  // never destroyed: files may outlive main
  return *limiter;
}

// Opens the regular file `path` with `flags` (O_RDONLY, or O_WRONLY and what creates it, with `mode`)
// and describes it (fstat); the descriptor is the caller's to close, and closed here on failure.
// Every file this Env reads or writes is opened through here. The open itself does not block: opening a FIFO to read
// waits for a writer, so one planted in a shared folder (a cache, a team's sample groups) under a name the loader opens
// would hang it (and opening one to write waits for a reader). O_NONBLOCK makes that open return (or fail, ENXIO, for a
// write), fstat shows what it is, and anything but a regular file is refused; the flag is then cleared (it means
// nothing to a regular file's reads and writes anyway).
Status OpenRegularFile(const std::string& path, int flags, int* fd, struct stat* st, mode_t mode = 0644) {
  *fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, mode);
  if (*fd < 0 && errno == ENXIO) {  // a FIFO without a reader, opened to write
    struct stat seen;
    if (::lstat(path.c_str(), &seen) == 0 && S_ISFIFO(seen.st_mode)) {
      return Status::InvalidArgument(path + " is a FIFO, not a regular file: shardpack opens regular files only");
    }
  }
  if (*fd < 0) {
    const bool writing = (flags & O_ACCMODE) != O_RDONLY;
    return Status::FromErrno((writing && (flags & O_CREAT) ? "cannot create " : "cannot open ") + path, errno);
  }
  if (::fstat(*fd, st) != 0) {
    const int e = errno;
    ::close(*fd);
    return Status::FromErrno("cannot stat " + path, e);
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(*fd);
    const char* kind = S_ISFIFO(st->st_mode)   ? "a FIFO"
                       : S_ISDIR(st->st_mode)  ? "a directory"
                       : S_ISSOCK(st->st_mode) ? "a socket"
                                               : "a device";
    return Status::InvalidArgument(path + " is " + kind + ", not a regular file: shardpack opens regular files only");
  }
  ::fcntl(*fd, F_SETFL, ::fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
  return Status::OK();
}

// A file read with pread(2). With a slot of the limiter it keeps the descriptor it was opened with;
// without one it opens its path for each read, and checks that the path still names the file first
// opened (device and inode), so that a file replaced meanwhile (a dataset packed again into the same
// folder) is an error, not other bytes.
class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  // Takes `fd` (open on `path`): kept with a slot, else closed now.
  PosixRandomAccessFile(std::string path, int fd, const struct stat& st)
      : path_(std::move(path)),
        kept_(RandomAccessLimiter().Acquire()),
        fd_(kept_ ? fd : -1),
        device_(st.st_dev),
        inode_(st.st_ino),
        reopen_(kept_ ? std::string() : Absolute(path_)) {
    if (!kept_) ::close(fd);
  }
  ~PosixRandomAccessFile() override {
    if (!kept_) return;
    ::close(fd_);
    RandomAccessLimiter().Release();
  }

  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (kept_) return ReadFrom(fd_, offset, n, scratch);
    int fd = -1;
    SHARDPACK_RETURN_IF_ERROR(OpenAgain(&fd, nullptr));
    const Status s = ReadFrom(fd, offset, n, scratch);
    ::close(fd);
    return s;
  }

  Status Stat(FileStat* out) const override {
    struct stat st;
    if (kept_) {
      if (::fstat(fd_, &st) != 0) return Status::FromErrno("cannot stat " + path_, errno);
    } else {
      int fd = -1;
      SHARDPACK_RETURN_IF_ERROR(OpenAgain(&fd, &st));
      ::close(fd);
    }
    *out = ToFileStat(st);
    return Status::OK();
  }

 private:
  Status ReadFrom(int fd, uint64_t offset, size_t n, char* scratch) const {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd, scratch + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::FromErrno("cannot read " + path_, errno);
      if (r == 0) {
        return Status::DataLoss(path_ + " ends before byte " + std::to_string(offset + n) + " (truncated?)");
      }
      got += static_cast<size_t>(r);
    }
    return Status::OK();
  }

  // `path` from the root: a process that changes its working directory (os.chdir in a training
  // script) still reaches the file it opened by a relative path.
  static std::string Absolute(const std::string& path) {
    if (!path.empty() && path[0] == '/') return path;
    char cwd[PATH_MAX];
    return ::getcwd(cwd, sizeof(cwd)) == nullptr ? path : std::string(cwd) + "/" + path;
  }

  // Opens the file again into *fd, checked to be the file first opened; its fstat into *st if asked.
  Status OpenAgain(int* fd, struct stat* st) const {
    struct stat now;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(reopen_, O_RDONLY, fd, &now));
    if (now.st_dev != device_ || now.st_ino != inode_) {
      ::close(*fd);
      return Status::DataLoss(path_ + " was replaced by another file while it was being read");
    }
    if (st != nullptr) *st = now;
    return Status::OK();
  }

  const std::string path_;
  const bool kept_;  // holds a slot of the limiter and fd_
  const int fd_;
  const dev_t device_;
  const ino_t inode_;
  const std::string reopen_;  // without a slot: the path it is opened by for each read
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing the file releases its flock
  Status Unlock() override { return Flock(LOCK_UN); }
  Status Relock() override { return Flock(LOCK_EX); }

 private:
  Status Flock(int operation) {
    while (::flock(fd_, operation) != 0) {
      if (errno != EINTR) return Status::FromErrno("cannot change a file lock", errno);
    }
    return Status::OK();
  }
  int fd_;
};

// A file mapped MAP_SHARED and read-only: its pages are the page cache's, shared by every process
// that maps it.
class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(void* map, size_t size, const FileStat& stat) : map_(map), size_(size), stat_(stat) {}
  ~PosixMappedFile() override {
    if (size_ > 0) ::munmap(map_, size_);
  }
  std::string_view data() const override { return {static_cast<const char*>(map_), size_}; }
  const FileStat& stat() const override { return stat_; }

 private:
  void* map_;
  size_t size_;
  FileStat stat_;
};

// flock(2) of `fd` (LOCK_SH or LOCK_EX) without waiting: *lock holds it and *acquired is true when
// taken; when another holder stands in the way, OK with *acquired false. `fd` is the lock's, or
// closed here when none is taken. `what` names the file or folder in an error.
Status TryFlock(int fd, int operation, const std::string& what, std::unique_ptr<FileLock>* lock, bool* acquired) {
  *acquired = false;
  int r;
  while ((r = ::flock(fd, operation | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return Status::OK();
    return Status::FromErrno("cannot lock " + what, e);
  }
  *acquired = true;
  *lock = std::make_unique<PosixFileLock>(fd);
  return Status::OK();
}

class PosixEnv final : public Env {
 public:
  // Never through a link: a link planted under the name (often a temporary one) would have the
  // write land wherever it points.
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, &fd, &st));
    *file = std::make_unique<PosixWritableFile>(path, fd);
    return Status::OK();
  }

  Status NewAppendableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_WRONLY | O_APPEND | O_NOFOLLOW, &fd, &st));
    *file = std::make_unique<PosixWritableFile>(path, fd, /*unbuffered=*/true);
    return Status::OK();
  }

  Status NewUnbufferedWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, &fd, &st));
    *file = std::make_unique<PosixWritableFile>(path, fd, /*unbuffered=*/true);
    return Status::OK();
  }

  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY, &fd, &st));
    *file = std::make_unique<PosixSequentialFile>(path, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY, &fd, &st));
    *file = std::make_unique<PosixRandomAccessFile>(path, fd, st);
    return Status::OK();
  }

  Status MapFile(const std::string& path, std::unique_ptr<MappedFile>* file) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY | O_NOFOLLOW, &fd, &st));
    void* map = nullptr;  // a file of 0 bytes maps to nothing (mmap refuses a length of 0)
    if (st.st_size > 0) {
      map = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        return Status::FromErrno("cannot map " + path, e);
      }
    }
    ::close(fd);  // the mapping keeps the file
    *file = std::make_unique<PosixMappedFile>(map, size_t(st.st_size), ToFileStat(st));
    return Status::OK();
  }

  Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY, &fd, &st));
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      ::close(fd);
      return Status::InvalidArgument(path + " holds " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                                     std::to_string(max_bytes));
    }
    contents->resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < contents->size()) {
      ssize_t r = ::read(fd, contents->data() + got, contents->size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        int e = errno;
        ::close(fd);
        return Status::FromErrno("cannot read " + path, e);
      }
      if (r == 0) break;  // the file shrank while we read it
      got += static_cast<size_t>(r);
    }
    contents->resize(got);
    ::close(fd);
    return Status::OK();
  }

  Status ListDir(const std::string& path, std::vector<DirEntry>* entries) override {
    entries->clear();
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return Status::FromErrno("cannot list " + path, errno);
    while (struct dirent* d = ::readdir(dir)) {
      std::string name = d->d_name;
      if (name == "." || name == "..") continue;
      DirEntry e;
      e.name = name;
      // The type readdir gives is enough for files and folders: no stat, which on a network file
      // system is a round trip to the metadata server for every image, in every part of a
      // partitioned pack. Links (to follow) and file systems that do not fill d_type are stat'ed,
      // relative to the open folder.
      if (d->d_type == DT_REG) {
        e.type = DirEntry::Type::kFile;
      } else if (d->d_type == DT_DIR) {
        e.type = DirEntry::Type::kDirectory;
      } else {
        struct stat lst, st;
        if (::fstatat(::dirfd(dir), d->d_name, &lst, AT_SYMLINK_NOFOLLOW) == 0) e.is_symlink = S_ISLNK(lst.st_mode);
        if (::fstatat(::dirfd(dir), d->d_name, &st, 0) == 0) {
          if (S_ISREG(st.st_mode))
            e.type = DirEntry::Type::kFile;
          else if (S_ISDIR(st.st_mode))
            e.type = DirEntry::Type::kDirectory;
        }
      }
      entries->push_back(std::move(e));
    }
    ::closedir(dir);
    return Status::OK();
  }

  Status GetFileId(const std::string& path, FileId* id) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno("cannot stat " + path, errno);
    id->device = st.st_dev;
    id->inode = st.st_ino;
    return Status::OK();
  }

  Status GetFileSize(const std::string& path, uint64_t* size) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno("cannot stat " + path, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Status CachedShare(const std::string& path, double* share) override {
    *share = 0;
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY, &fd, &st));
    if (st.st_size == 0) {
      ::close(fd);
      *share = 1;  // nothing to read
      return Status::OK();
    }
    // mincore() on a mapping of the file says, page by page, what is resident; mapping reads nothing.
    void* map = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return Status::FromErrno("cannot map " + path, errno);
    const size_t page = size_t(::sysconf(_SC_PAGESIZE)), pages = (size_t(st.st_size) + page - 1) / page;
    std::vector<unsigned char> resident(pages);
    const int r = ::mincore(map, size_t(st.st_size), resident.data());
    const int e = errno;
    ::munmap(map, size_t(st.st_size));
    if (r != 0) return Status::FromErrno("cannot tell what is cached of " + path, e);
    size_t held = 0;
    for (unsigned char v : resident) held += v & 1;
    *share = double(held) / double(pages);
    return Status::OK();
  }

  Status DropCachedPages(const std::string& path) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY, &fd, &st));
    const int e = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // returns the error, not errno
    ::close(fd);
    if (e != 0) return Status::FromErrno("cannot drop the cached pages of " + path, e);
    return Status::OK();
  }

  Status CreateDirs(const std::string& path) override {
    if (path.empty()) return Status::OK();
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return Status::OK();
      return Status::InvalidArgument(path + " exists and is not a directory");
    }
    size_t slash = path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) {
      SHARDPACK_RETURN_IF_ERROR(CreateDirs(path.substr(0, slash)));
    }
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::FromErrno("cannot create directory " + path, errno);
    }
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return Status::FromErrno("cannot rename " + from + " to " + to, errno);
    }
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::FromErrno("cannot remove " + path, errno);
    return Status::OK();
  }

  Status RemoveEmptyDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return Status::FromErrno("cannot remove " + path, errno);
    return Status::OK();
  }

  Status SyncDir(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno("cannot open directory " + path, errno);
    int rc = ::fsync(fd);
    int e = errno;
    ::close(fd);
    if (rc != 0) return Status::FromErrno("cannot sync directory " + path, e);
    return Status::OK();
  }

  // flock(2): held by the open file, so a process that dies (even by SIGKILL) releases it. Opened
  // read-only (flock needs no more), so that a lock file of a shared folder's other members locks.
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY | O_CREAT | O_NOFOLLOW, &fd, &st, mode_t(mode)));
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return Status::FromErrno("cannot lock " + path, e);
    }
    *lock = std::make_unique<PosixFileLock>(fd);
    return Status::OK();
  }

  Status TryLockFolder(const std::string& dir, std::unique_ptr<FileLock>* lock, bool* acquired) override {
    *acquired = false;
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno("cannot open folder " + dir, errno);
    return TryFlock(fd, LOCK_EX, "folder " + dir, lock, acquired);
  }

  Status TryLockFile(const std::string& path, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                     uint32_t mode) override {
    *acquired = false;
    int fd;
    struct stat st;
    SHARDPACK_RETURN_IF_ERROR(OpenRegularFile(path, O_RDONLY | O_CREAT | O_NOFOLLOW, &fd, &st, mode_t(mode)));
    return TryFlock(fd, shared ? LOCK_SH : LOCK_EX, path, lock, acquired);
  }

  Status StatPath(const std::string& path, FileStat* out) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Status::FromErrno("cannot stat " + path, errno);
    *out = ToFileStat(st);
    return Status::OK();
  }

  Status CreateDir(const std::string& path, uint32_t mode) override {
    if (::mkdir(path.c_str(), mode_t(mode)) == 0) {
      // mkdir applies the umask; the mode asked for is the mode wanted (a team folder's group bits).
      if (::chmod(path.c_str(), mode_t(mode)) != 0) return Status::FromErrno("cannot set the mode of " + path, errno);
      return Status::OK();
    }
    if (errno != EEXIST) return Status::FromErrno("cannot create directory " + path, errno);
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::OK();
    return Status::InvalidArgument(path + " exists and is not a directory");
  }

  Status NewExclusiveFile(const std::string& path, uint32_t mode, std::unique_ptr<WritableFile>* file) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode));
    if (fd < 0) return Status::FromErrno("cannot create " + path, errno);
    if (::fchmod(fd, mode_t(mode)) != 0) {  // past the umask, as CreateDir
      const int e = errno;
      ::close(fd);
      (void)::unlink(path.c_str());
      return Status::FromErrno("cannot set the mode of " + path, e);
    }
    *file = std::make_unique<PosixWritableFile>(path, fd, /*unbuffered=*/true);
    return Status::OK();
  }

  Status FileSystemType(const std::string& path, std::string* type, bool* network) override {
    struct statfs fs;
    if (::statfs(path.c_str(), &fs) != 0) return Status::FromErrno("cannot tell the file system of " + path, errno);
    // Magic numbers of linux/magic.h and the file systems' own sources (Lustre, GPFS, BeeGFS).
    struct Known {
      uint64_t magic;
      const char* name;
      bool network;
    };
    static constexpr Known kKnown[] = {
        {0xEF53, "ext4", false},      {0x58465342, "xfs", false},     {0x9123683E, "btrfs", false},
        {0x01021994, "tmpfs", false}, {0x794C7630, "overlay", false}, {0x2FC12FC1, "zfs", false},
        {0x6969, "nfs", true},        {0x517B, "smb", true},          {0xFF534D42, "cifs", true},
        {0xFE534D42, "smb2", true},   {0x0BD00BD0, "lustre", true},   {0x47504653, "gpfs", true},
        {0x00C36400, "ceph", true},   {0x19830326, "beegfs", true},   {0x65735546, "fuse", true},
        {0x5346414F, "afs", true},    {0x6B414653, "afs", true},
    };
    for (const Known& k : kKnown) {
      if (uint64_t(fs.f_type) == k.magic) {
        *type = k.name;
        *network = k.network;
        return Status::OK();
      }
    }
    *type = "unknown";
    *network = false;
    return Status::OK();
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv;
  return env;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string BaseName(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status RandomAccessFile::Stat(FileStat* stat) const {
  (void)stat;
  return Status::Unsupported("this file cannot describe itself");
}

Status RandomAccessFile::Size(uint64_t* size) const {
  FileStat stat;
  SHARDPACK_RETURN_IF_ERROR(Stat(&stat));
  *size = stat.size;
  return Status::OK();
}

namespace {
// Env::MapFile's default: the bytes copied into memory.
class CopiedMappedFile final : public MappedFile {
 public:
  CopiedMappedFile(std::string bytes, const FileStat& stat) : bytes_(std::move(bytes)), stat_(stat) {}
  std::string_view data() const override { return bytes_; }
  const FileStat& stat() const override { return stat_; }

 private:
  std::string bytes_;
  FileStat stat_;
};
}  // namespace

Status Env::MapFile(const std::string& path, std::unique_ptr<MappedFile>* file) {
  FileStat st;
  SHARDPACK_RETURN_IF_ERROR(StatPath(path, &st));
  if (st.type != FileStat::Type::kFile) return Status::InvalidArgument(path + " is not a regular file");
  std::string bytes;
  SHARDPACK_RETURN_IF_ERROR(ReadFile(path, UINT64_MAX, &bytes));
  st.size = bytes.size();
  *file = std::make_unique<CopiedMappedFile>(std::move(bytes), st);
  return Status::OK();
}

Status SequentialFile::Skip(uint64_t n) {
  char scratch[64 * 1024];
  while (n > 0) {
    size_t got = 0;
    SHARDPACK_RETURN_IF_ERROR(Read(static_cast<size_t>(std::min<uint64_t>(n, sizeof(scratch))), scratch, &got));
    if (got == 0) return Status::OK();  // end of file
    n -= got;
  }
  return Status::OK();
}

Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents, bool sync) {
  const std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewWritableFile(tmp, &file));
  Status s = file->Append(contents);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) (void)env->RemoveFile(tmp);
  return s;
}

}  // namespace shardpack
