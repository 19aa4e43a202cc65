// A TFRecord file: records framed as
//   uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes,
//   `length` bytes of data, uint32 masked CRC-32C of the data
// (tensorflow/core/lib/io/record_writer.cc), optionally the whole file gzip-compressed (TF's
// "GZIP" option). Nothing indexes the records: they are read front to back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/whole_file.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

// `path` whole into *contents: mapped, or inflated when it is gzip (at most max_bytes either way: a
// bound on what a hostile file can make us hold). DataLoss naming the file for a gzip stream that
// does not inflate, or one over the bound.
Status ReadTfRecordFile(Env* env, const std::string& path, uint64_t max_bytes, WholeFile* contents);

// Whether `contents` starts with a record whose length CRC holds: how a file without a telling
// name is recognised as TFRecord.
bool LooksLikeTfRecord(std::string_view contents);

class TfRecordReader {
 public:
  // `contents` must outlive the reader; `path` names the file in messages.
  TfRecordReader(std::string_view contents, std::string path) : data_(contents), path_(std::move(path)) {}

  // The next record's data into *record (a view into the contents); *done at the end of the file.
  // A record whose data CRC does not hold: *damaged says why (naming the file, the record and its
  // offset) and the reader goes on after it, since its length was sound. A length whose CRC does
  // not hold, or a file cut short, loses the framing: DataLoss, and the rest of the file is
  // unreadable.
  Status Next(std::string_view* record, std::string* damaged, bool* done);
  uint64_t records() const { return records_; }  // records framed so far

 private:
  std::string_view data_;
  std::string path_;
  size_t offset_ = 0;
  uint64_t records_ = 0;
};

}  // namespace shardpack
