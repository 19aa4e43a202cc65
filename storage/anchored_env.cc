#include "storage/anchored_env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace shardpack {
namespace {

class AnchoredEnv final : public Env {
 public:
  AnchoredEnv(Env* base, std::string folder, int fd)
      : base_(base), folder_(std::move(folder)), fd_(fd), via_("/proc/self/fd/" + std::to_string(fd)) {}
  ~AnchoredEnv() override { ::close(fd_); }

  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    return Named(base_->NewWritableFile(Via(p), f));
  }
  Status NewUnbufferedWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    return Named(base_->NewUnbufferedWritableFile(Via(p), f));
  }
  Status NewSequentialFile(const std::string& p, std::unique_ptr<SequentialFile>* f) override {
    return Named(base_->NewSequentialFile(Via(p), f));
  }
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    return Named(base_->NewRandomAccessFile(Via(p), f));
  }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override {
    return Named(base_->ReadFile(Via(p), max, c));
  }
  Status ListDir(const std::string& p, std::vector<DirEntry>* e) override { return Named(base_->ListDir(Via(p), e)); }
  Status GetFileId(const std::string& p, FileId* id) override { return Named(base_->GetFileId(Via(p), id)); }
  Status GetFileSize(const std::string& p, uint64_t* s) override { return Named(base_->GetFileSize(Via(p), s)); }
  bool FileExists(const std::string& p) override { return base_->FileExists(Via(p)); }
  Status CreateDirs(const std::string& p) override { return Named(base_->CreateDirs(Via(p))); }
  Status RenameFile(const std::string& a, const std::string& b) override {
    return Named(base_->RenameFile(Via(a), Via(b)));
  }
  Status RemoveFile(const std::string& p) override { return Named(base_->RemoveFile(Via(p))); }
  Status SyncDir(const std::string& p) override { return Named(base_->SyncDir(Via(p))); }
  Status GetStoredXxh64(const std::string& p, std::string* x) override {
    return Named(base_->GetStoredXxh64(Via(p), x));
  }
  Status FreeUnfinishedWrites(const std::string& dir, const std::function<bool(const std::string&)>& owns) override {
    return Named(base_->FreeUnfinishedWrites(Via(dir), owns));
  }
  Status DropCachedPages(const std::string& p) override { return Named(base_->DropCachedPages(Via(p))); }
  Status CachedShare(const std::string& p, double* share) override { return Named(base_->CachedShare(Via(p), share)); }
  Status StatPath(const std::string& p, FileStat* s) override { return Named(base_->StatPath(Via(p), s)); }
  Status CreateDir(const std::string& p, uint32_t mode) override { return Named(base_->CreateDir(Via(p), mode)); }
  Status NewExclusiveFile(const std::string& p, uint32_t mode, std::unique_ptr<WritableFile>* f) override {
    return Named(base_->NewExclusiveFile(Via(p), mode, f));
  }
  Status FileSystemType(const std::string& p, std::string* type, bool* network) override {
    return Named(base_->FileSystemType(Via(p), type, network));
  }
  Status NewAppendableFile(const std::string& p, std::unique_ptr<WritableFile>* file) override {
    return Named(base_->NewAppendableFile(Via(p), file));
  }
  Status LockFile(const std::string& p, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    return Named(base_->LockFile(Via(p), lock, mode));
  }
  Status TryLockFile(const std::string& p, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                     uint32_t mode) override {
    return Named(base_->TryLockFile(Via(p), shared, lock, acquired, mode));
  }
  Status TryLockFolder(const std::string& p, std::unique_ptr<FileLock>* lock, bool* acquired) override {
    return Named(base_->TryLockFolder(Via(p), lock, acquired));
  }

 private:
  // The folder itself, or a path below it, through the descriptor; any other path as it is.
  std::string Via(const std::string& path) const {
    if (path == folder_) return via_ + "/.";  // (the link /proc/self/fd/N itself is a symbolic link to lstat)
    if (path.size() > folder_.size() && path.compare(0, folder_.size(), folder_) == 0 && path[folder_.size()] == '/') {
      return via_ + path.substr(folder_.size());
    }
    return path;
  }

  // A message with the folder's own name where the descriptor's stands.
  Status Named(const Status& s) const {
    if (s.ok() || s.message().find(via_) == std::string::npos) return s;
    std::string message = s.message();
    for (size_t at; (at = message.find(via_)) != std::string::npos;) message.replace(at, via_.size(), folder_);
    return s.WithMessage(std::move(message));
  }

  Env* const base_;
  const std::string folder_;
  const int fd_;
  const std::string via_;  // "/proc/self/fd/N"
};

}  // namespace

Status AnchorEnvAt(Env* base, const std::string& folder, std::unique_ptr<Env>* anchored) {
  FileStat checked;
  const Status described = base->StatPath(folder, &checked);
  if (described.code() == Status::Code::kUnsupported) return described;
  SHARDPACK_RETURN_IF_ERROR(described);
  if (::access("/proc/self/fd", X_OK) != 0) return Status::Unsupported("no /proc/self/fd to anchor " + folder);
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("cannot open the cache folder " + folder, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || uint64_t(st.st_dev) != checked.device || uint64_t(st.st_ino) != checked.inode) {
    ::close(fd);
    return Status::InvalidArgument("the cache folder " + folder +
                                   " was replaced between its check and its opening: refused (another user may be "
                                   "swapping it); check who can write in the folders above it");
  }
  anchored->reset(new AnchoredEnv(base, folder, fd));
  return Status::OK();
}

}  // namespace shardpack
