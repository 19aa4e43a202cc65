#include "ground/shard_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace shardpack {
namespace {

constexpr uint64_t kHugePage = uint64_t(2) << 20;

uint64_t RoundUp(uint64_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

ShardBuffer::~ShardBuffer() {
  if (base_ != nullptr) ::munmap(base_, capacity_);
}

Status ShardBuffer::Reset(uint64_t bytes) {
  size_ = 0;
  return bytes > capacity_ ? Grow(bytes) : Status::OK();
}

Status ShardBuffer::Append(std::string_view data) {
  if (data.size() > capacity_ - size_) {
    SHARDPACK_RETURN_IF_ERROR(Grow(std::max(size_ + data.size(), capacity_ * 2)));
  }
  std::memcpy(base_ + size_, data.data(), data.size());
  size_ += data.size();
  return Status::OK();
}

Status ShardBuffer::Grow(uint64_t bytes) {
  const uint64_t capacity = RoundUp(bytes);
  void* p = base_ == nullptr ? ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                             : ::mremap(base_, capacity_, capacity, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {
    return Status::FromErrno("cannot map " + std::to_string(capacity) + " bytes for a download", errno);
  }
  // Advice only: without transparent huge pages the buffer works in small pages.
  (void)::madvise(p, capacity, MADV_HUGEPAGE);
  base_ = static_cast<char*>(p);
  capacity_ = capacity;
  return Status::OK();
}

}  // namespace shardpack
