// TarShardReader: reads the members of a tar shard through libarchive (which understands every tar
// dialect: ustar, GNU, PAX), with all file I/O going through an Env. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shardpack/env.h"

namespace shardpack {

struct TarMember {
  std::string name;
  uint64_t header_offset = 0;  // where the member's header starts in the archive
  uint64_t data_offset = 0;    // where its data starts (in the uncompressed tar stream)
  uint64_t size = 0;
  bool regular = false;  // a regular file (not a directory, link, device, ...)
  bool directory = false;
};

class TarShardReader {
 public:
  static Status Open(Env* env, const std::string& path, std::unique_ptr<TarShardReader>* reader);
  ~TarShardReader();
  TarShardReader(const TarShardReader&) = delete;
  TarShardReader& operator=(const TarShardReader&) = delete;

  // Moves to the next member; *done is set at the end of the archive. DataLoss on damaged or
  // truncated archives, naming the path and libarchive's reason.
  Status Next(TarMember* member, bool* done);
  // Reads the current member's data; InvalidArgument when it is larger than max_bytes. Data not
  // read is skipped by seeking, so scanning only the headers of a shard reads little of it.
  Status ReadData(uint64_t max_bytes, std::string* data);
  // True when the tar is wrapped in a compression filter (gzip, ...): offsets are then positions in
  // the decompressed stream, not in the file.
  bool compressed() const;
  // Writes what `path` holds, decompressed (gzip, bzip2, xz, zstd: whatever libarchive's filters
  // read), to `out`, which it closes: the plain tar of a .tar.gz shard, for reads at random.
  // DataLoss naming the path when the stream is damaged or cut short.
  static Status Decompress(Env* env, const std::string& path, WritableFile* out);

 private:
  struct Impl;
  explicit TarShardReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardpack
