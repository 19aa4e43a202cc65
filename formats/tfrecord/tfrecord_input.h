// TfRecordInput: TFRecord files of tf.train.Example (the layout of TensorFlow's ImageNet tools:
// `image/encoded`, `image/class/label`, ...) as a PackInput, for `convert` (docs/formats/tfrecord.md).
// Nothing indexes a TFRecord file, so it is converted, never read in place.
//
// A sample is a record: its image the one value of the bytes feature `image/encoded`, its label the
// first value of the int64 feature `image/class/label` (-1 without one; labels are kept as they
// are, TF's ImageNet counts from 1), its key the record's place. Every other feature goes, by
// name, into a `json` field (where the output keeps fields; into the sample's metadata otherwise):
// int64 and float lists as numbers (one value as a number), bytes as text when UTF-8, else as
// {"base64": ...}. A record whose CRC fails, an Example that does not parse or has no image is
// skipped and reported, naming the file and the record; a file whose framing breaks (a length CRC
// that fails, a file cut short) loses its remaining records, reported the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/pack_input.h"
#include "formats/tfrecord/tfrecord_file.h"
#include "shardpack/env.h"

namespace shardpack {

// The most one TFRecord file may hold (after inflating): each is read whole.
inline constexpr uint64_t kMaxTfRecordFileBytes = uint64_t(16) << 30;

class TfRecordInput final : public PackInput {
 public:
  // `path`: a TFRecord file, or a folder of them (files named *.tfrecord, *.tfrecords, *.tfrec,
  // each optionally .gz, or without such a name whose first record frames, as TF's ImageNet
  // "train-00000-of-01024"; sorted by name). NotFound when it is neither.
  static Status Open(Env* env, const std::string& path, uint64_t max_member_bytes, std::unique_ptr<PackInput>* input);

  const std::vector<std::string>& class_names() const override { return classes_; }
  uint64_t expected() const override { return 0; }
  Status Next(PackItem* item, bool* done) override;
  void KeepFields(bool keep) override { keep_fields_ = keep; }

 private:
  TfRecordInput(Env* env, std::vector<std::string> files, uint64_t max_member_bytes)
      : env_(env), files_(std::move(files)), max_member_bytes_(max_member_bytes) {}
  // A skipped item naming `where`, for `why`.
  static void Skip(const std::string& where, Status why, PackItem* item);
  void Emit(std::string_view record, PackItem* item);

  Env* env_;
  std::vector<std::string> files_;
  uint64_t max_member_bytes_;
  std::vector<std::string> classes_;  // none: labels are numbers
  bool keep_fields_ = false;
  size_t file_ = 0;                         // the file being read
  WholeFile contents_;                      // its bytes (mapped, or inflated)
  std::unique_ptr<TfRecordReader> reader_;  // null: file_ not opened yet
};

}  // namespace shardpack
