// RawMaskArrays: the label-mask arrays of the raw shard being written (raw_format.h names the
// files): for each mask field, a uint8 slot per sample, zeros where a sample has no such mask, and
// the presence array beside it.
//
// The pixels stream into "<file>.tmp" as they arrive, behind a placeholder header rewritten when
// the shard completes, so memory stays a byte per sample and field whatever the shard's size. A
// field first seen at sample k gets zero slots for the k samples before it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

class RawMaskArrays {
 public:
  RawMaskArrays(Env* env, std::string dir, bool sync) : env_(env), dir_(std::move(dir)), sync_(sync) {}
  ~RawMaskArrays() { Discard(); }
  RawMaskArrays(const RawMaskArrays&) = delete;
  RawMaskArrays& operator=(const RawMaskArrays&) = delete;

  // A new shard, `shard_file`; fixed: its images are all height x width (else --keep-size).
  void Start(const std::string& shard_file, bool fixed, uint32_t height, uint32_t width);
  // The next sample, whose stored image is width x height: its masks (nullptr: none), each of
  // width x height pixels (InvalidArgument otherwise).
  Status Add(const std::vector<SampleMask>* masks, uint32_t width, uint32_t height);
  // Completes every array and publishes it with its presence file, adding both to *side_files.
  // Before the shard itself is renamed into place: a shard in place has all its side files.
  Status Publish(std::vector<SideFile>* side_files);
  // Removes the temporary files of an unpublished shard.
  void Discard();

 private:
  struct Array {
    std::unique_ptr<WritableFile> file;
    std::string present;  // a byte per sample so far
  };
  Status Open(const std::string& field, Array* array);
  Status AppendZeros(WritableFile* file, uint64_t n);
  std::string TmpPath(const std::string& field) const;

  Env* const env_;
  const std::string dir_;
  const bool sync_;
  std::string shard_file_;
  bool fixed_ = false;
  uint32_t height_ = 0, width_ = 0;
  uint64_t samples_ = 0, pixels_ = 0;  // of the shard so far
  std::map<std::string, Array> arrays_;
};

}  // namespace shardpack
