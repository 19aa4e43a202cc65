#include "ground/shard_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shardpack {

ShardBuffer::~ShardBuffer() {
  if (fd_ >= 0) ::close(fd_);  // the last reference: the kernel frees the pages
}

Status ShardBuffer::Append(std::string_view data) {
  if (fd_ < 0) {
    fd_ = ::memfd_create("shardpack-shard", MFD_CLOEXEC);
    if (fd_ < 0) {
      return Status::IOError(std::string("cannot create an in-memory file for a streamed shard (memfd_create: ") +
                             std::strerror(errno) + "); give the loader a cache folder instead (SHARDPACK_CACHE=DIR)");
    }
  }
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd_, data.data(), data.size(), off_t(size_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::FromErrno("cannot keep " + std::to_string(size_ + data.size()) + " bytes of a download in memory",
                               n < 0 ? errno : ENOMEM);
    }
    size_ += uint64_t(n);
    data.remove_prefix(size_t(n));
  }
  capacity_ = std::max(capacity_, size_);
  return Status::OK();
}

Status ShardBuffer::Read(uint64_t offset, size_t n, char* scratch) const {
  while (n > 0) {
    const ssize_t got = ::pread(fd_, scratch, n, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Status::FromErrno("cannot read a download kept in memory", got < 0 ? errno : EIO);
    scratch += got, offset += uint64_t(got), n -= size_t(got);
  }
  return Status::OK();
}

Status ShardBuffer::ReadAll(std::string* out) const {
  out->resize(size_);
  return size_ == 0 ? Status::OK() : Read(0, size_, out->data());
}

}  // namespace shardpack
