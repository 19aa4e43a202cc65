// ShardBuffer: memory for a whole file received from the network (a shard streamed without a
// cache), kept in an anonymous in-memory file (memfd) rather than in mapped memory. Why: fresh
// anonymous memory is zeroed page by page when first touched, and on virtual machines that first
// touch took more CPU than receiving the bytes (with huge pages, anywhere from 0.07 to 1.7 s for
// 440 MB); bytes written into a memfd with write() fill its pages without zeroing them, as bytes
// written into the page cache of a file do. Reads copy out with pread, as reads of a local file do.
// Reused from file to file, its pages are allocated once. The pages count as the process's memory
// (its cgroup's, and Shmem in /proc/meminfo) but not as its RSS, since they are never mapped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

class ShardBuffer {
 public:
  ShardBuffer() = default;
  ~ShardBuffer();
  ShardBuffer(const ShardBuffer&) = delete;
  ShardBuffer& operator=(const ShardBuffer&) = delete;

  // Empties the buffer; the pages it has are kept for the next bytes.
  void Clear() { size_ = 0; }
  // Appends. IOError when the system has no memory for it.
  Status Append(std::string_view data);
  // Copies n bytes at offset into scratch; the caller keeps offset + n within size().
  Status Read(uint64_t offset, size_t n, char* scratch) const;
  // The whole content (small files).
  Status ReadAll(std::string* out) const;

  uint64_t size() const { return size_; }
  // The most bytes it has held: the memory its pages take.
  uint64_t capacity() const { return capacity_; }

 private:
  int fd_ = -1;  // created by the first Append
  uint64_t size_ = 0;
  uint64_t capacity_ = 0;
};

}  // namespace shardpack
