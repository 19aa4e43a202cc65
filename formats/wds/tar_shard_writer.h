// TarShardWriter: writes one ustar archive, member by member, to a WritableFile.
//
// Keeps a running XXH64 of every byte written (the shard checksum) and of the bytes since the last
// BeginRange() (the per-sample checksum). Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ground/checksum.h"
#include "shardpack/env.h"

namespace shardpack {

// The 512-byte ustar header of a regular file `name` (at most 100 bytes) holding `size` bytes.
std::string UstarHeader(std::string_view name, uint64_t size);

class TarShardWriter {
 public:
  explicit TarShardWriter(std::unique_ptr<WritableFile> file);
  TarShardWriter(const TarShardWriter&) = delete;
  TarShardWriter& operator=(const TarShardWriter&) = delete;

  // Appends a regular-file member; *data_offset receives where its data starts in the archive.
  // InvalidArgument when the name is longer than 100 bytes or the data too large for ustar.
  Status AddMember(std::string_view name, std::string_view data, uint64_t* data_offset);
  // Writes the end-of-archive blocks, syncs when asked, and closes the file.
  Status Finish(bool sync);

  // Starts a new per-sample checksum range at the current offset.
  void BeginRange();
  uint64_t range_checksum() const { return range_hash_.Digest(); }
  uint64_t size() const { return size_; }
  uint64_t checksum() const { return file_hash_.Digest(); }

 private:
  Status Write(std::string_view bytes, bool in_range);

  std::unique_ptr<WritableFile> file_;
  uint64_t size_ = 0;
  StreamingXxh64 file_hash_;
  StreamingXxh64 range_hash_;
};

}  // namespace shardpack
