// DatasetWriter: the interface every output format implements (formats/<name>/).
//
// Lifecycle, as in leveldb's TableBuilder: Add() samples in order, then exactly one of Finish()
// (publish) or Abandon() (remove unpublished files). The first error is sticky: status() returns it
// and later calls fail with it. A writer is used by one thread at a time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ground/checksum.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

// A file of a sample besides its image: a caption ("txt"), annotations ("json"), a mask
// ("seg.png"). `name` is the field name WebDataset gives it (the member name after the key's dot).
struct SampleField {
  std::string name;
  std::string data;  // the file's bytes, untouched
};

// A label mask (an image field, e.g. "seg.png") decoded and cut as its sample's image was, for
// formats that store pixels (raw): one 8-bit channel of the stored image's width x height.
struct SampleMask {
  std::string name;  // the field's name
  std::string pixels;
};

// One sample on its way into a dataset. The writer copies what it keeps; views stay the caller's.
struct Sample {
  std::string_view key;         // unique, no '.' or '/' (lib/sample_keys.h)
  int32_t label = -1;           // -1: unlabelled
  std::string_view class_name;  // empty when unlabelled
  std::string_view relpath;     // source path relative to SRC
  ImageInfo image;
  ImageInfo original;      // the image before pack --max-side re-encoded it (width 0: not re-encoded)
  int orientation = 1;     // EXIF orientation of `bytes` (1-8), as a JPEG's APP1 gives it; 1 for others
  std::string_view bytes;  // the encoded image, untouched
  // XXH64 of `bytes` when the caller has it already (the pack pipeline computes it in its parallel
  // stage, off the ordered write stage); read it through BytesChecksum().
  std::optional<uint64_t> bytes_xxh64;
  const DecodedImage* pixels =
      nullptr;  // the pipeline's decode (raw: decoded and transformed); may be stale for other formats, which ignore it
  // Metadata carried over from a converted dataset (its key, json and txt fields); formats that
  // keep per-sample metadata store it under "source". nullptr when none.
  const nlohmann::json* extra = nullptr;
  // The sample's other files, sorted by name, for formats that store them (Format::stores_fields);
  // nullptr when none.
  const std::vector<SampleField>* fields = nullptr;
  // The sample's masks as pixels, when the format's PrepareSample made them (raw); nullptr when none.
  const std::vector<SampleMask>* masks = nullptr;
};

// XXH64 of sample.bytes, computed only when the sample does not carry it.
inline uint64_t BytesChecksum(const Sample& sample) {
  return sample.bytes_xxh64 ? *sample.bytes_xxh64 : Xxh64(sample.bytes);
}

class DatasetWriter {
 public:
  virtual ~DatasetWriter() = default;
  DatasetWriter() = default;
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  virtual Status Add(const Sample& sample) = 0;
  // Completes the last shard and returns the entries of all published shards, in order.
  // `dataset_info` (sample count, classes, options) is for formats that store dataset metadata
  // inside their own files as well as in the manifest.
  virtual Status Finish(const nlohmann::json& dataset_info, std::vector<ShardEntry>* shards) = 0;
  // Removes the temporary file of the shard in progress. Completed shards stay on disk (they are
  // complete and checksummed), but without a manifest the dataset does not look complete.
  virtual void Abandon() = 0;
  virtual Status status() const = 0;
  // The shards published so far, complete and in place (empty for formats without shards).
  virtual const std::vector<ShardEntry>& published() const = 0;
  // Before the first Add(): continue after `shards`, published by an earlier run that stopped
  // (pack --resume). The next shard gets the next number. Unsupported for formats that cannot.
  virtual Status ResumeAfter(const std::vector<ShardEntry>& shards) = 0;
  // Before the first Add() (and before ResumeAfter): number shards from `first` on, and fail
  // (InvalidArgument) rather than number one `end` or above. One part of a partitioned pack
  // (ops/pack/pack_partition.h) writes the shard numbers of its share. Unsupported for formats without
  // shards.
  virtual Status SetShardRange(uint64_t first, uint64_t end) {
    (void)first;
    (void)end;
    return Status::Unsupported("this format writes one file, not shards");
  }
  virtual uint64_t samples_written() const = 0;
  virtual uint64_t bytes_written() const = 0;
};

}  // namespace shardpack
