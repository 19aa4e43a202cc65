// ShardBuffer: memory for a whole file received from the network (a shard streamed without a
// cache). Mapped in one piece, with transparent huge pages asked for: a shard of hundreds of MB
// touched in 4 KiB pages costs a page fault each, which on virtual machines can take more CPU
// than receiving the bytes. Reused from file to file, it is faulted in once.
#pragma once

#include <cstdint>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

class ShardBuffer {
 public:
  ShardBuffer() = default;
  ~ShardBuffer();
  ShardBuffer(const ShardBuffer&) = delete;
  ShardBuffer& operator=(const ShardBuffer&) = delete;

  // Empties the buffer and makes room for `bytes` (keeps a larger mapping).
  Status Reset(uint64_t bytes);
  // Appends, growing the mapping when needed. IOError when the system has no memory for it.
  Status Append(std::string_view data);
  // Drops the bytes past `size` (a retried download that resumes after what it kept).
  void Truncate(uint64_t size) {
    if (size < size_) size_ = size;
  }

  const char* data() const { return base_; }
  uint64_t size() const { return size_; }
  std::string_view view() const { return {base_, size_}; }

 private:
  Status Grow(uint64_t bytes);

  char* base_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t size_ = 0;
};

}  // namespace shardpack
