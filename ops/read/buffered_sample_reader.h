// BufferedSampleReader: samples read ahead and held in memory, so that a streamed shard can be
// released while samples of it still wait in the loader's shuffle buffer.
//
// Why: under the streaming shuffle a sample may wait in the buffer long after the stream has moved
// on from its shard. Were the shard kept until its last sample is taken, memory would follow shard
// size times the shards with a sample in the buffer (whole datasets, for large shards); with the
// waiting samples copied here when the stream leaves their shard (Keep), it follows the buffer's
// bytes. The loader Keeps them, reads them as usual (this reader serves what it keeps and passes
// everything else on), and Forgets each once its batch is filled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/read/forwarding_dataset_reader.h"

namespace shardpack {

class BufferedSampleReader final : public ForwardingDatasetReader {
 public:
  // fields: the fields each kept sample is read with (ReadField), mask: the mask field (ReadField
  // for encoded images, ReadMaskPixels for stored pixels, as the loader reads it); may be empty.
  BufferedSampleReader(std::unique_ptr<DatasetReader> reader, std::vector<std::string> fields, std::string mask)
      : ForwardingDatasetReader(std::move(reader), nullptr), fields_(std::move(fields)), mask_(std::move(mask)) {}

  // Reads sample `index` whole from the reader below and keeps it, its failures included (a
  // damaged sample fails when it is read, as it would have). Thread-safe.
  void Keep(uint64_t index);
  // Drops what Keep kept of `index` (nothing when it kept nothing).
  void Forget(uint64_t index);
  // Drops everything kept (a new epoch's plan).
  void Clear();
  // The bytes kept now.
  uint64_t kept_bytes() const;

  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override;

 private:
  struct Piece {
    Status status;
    std::string bytes;
    bool present = false;
  };
  struct Kept {
    Status status;
    ReadSample sample;
    std::map<std::string, Piece> fields;  // by name; the mask under its name too
    Piece mask_pixels;
    uint64_t bytes = 0;
  };
  // The kept piece, or nullptr (then the caller reads below). Called under mu_.
  const Piece* FindPiece(uint64_t index, const std::string& name, bool pixels) const;
  // Answers from what was kept, when it was: true with *status (and *data, *present).
  bool ServeKept(uint64_t index, const std::string& name, bool pixels, std::string* data, bool* present,
                 Status* status) const;

  const std::vector<std::string> fields_;
  const std::string mask_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const Kept>> kept_;
  uint64_t kept_bytes_ = 0;
};

}  // namespace shardpack
