// WholeFile: a file's bytes held for reading whole (a shard that convert, stat or verify walks
// from start to end): the file mapped, with no copy through a buffer (convert reads gigabytes:
// mapping took MDS's convert of 2.1 GB from 6.0 s to 1.7 s into /dev/shm), or bytes made from it
// (inflated, decompressed) held here.
//
// A mapped file that another process cuts short while it is being read ends the process
// (SIGBUS), as LMDB's mapped environment would: a file being rewritten under a running convert.
// Sizes are checked against the dataset's index before anything is read.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

class WholeFile {
 public:
  // Maps `path`; InvalidArgument naming it when it holds more than max_bytes.
  Status Map(Env* env, const std::string& path, uint64_t max_bytes);
  // Holds `bytes` (made from a file) instead.
  void Own(std::string bytes);
  std::string_view bytes() const { return bytes_; }
  // Lets go of the mapping or the bytes.
  void Clear();

 private:
  std::unique_ptr<MappedFile> mapped_;
  std::string owned_;
  std::string_view bytes_;
};

}  // namespace shardpack
