// LineFile: a side file of text lines (a sample table, a DALI index) read one line at a time, by
// number, without keeping its text (issue 39). Reading a dataset of 100,000 shards at random
// touches a new shard for almost every sample; parsing its 10,000-line tables into records each time
// cost 2.4 ms a shard and 650 KB kept. A LineFile instead reads the file once, whole, through the
// file it keeps open, checks it against the manifest's checksum, and notes where every
// kLinesPerMark-th line starts (8 bytes a mark: 5 KB for 10,000 lines); a line is then one pread of
// the lines from the mark before it, parsed when asked for.
//
// The checked bytes are those later read: both come through the same open file, so a file renamed
// over the path meanwhile is not read (a file changed in place is, as the shard itself would be:
// `shardpack verify` is the check for that).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

class LineFile {
 public:
  static constexpr size_t kLinesPerMark = 16;

  // Opens dir/entry.file and checks it against entry's checksum (CheckSideFile's DataLoss
  // otherwise). With `header`, its first line (without its newline) goes there and the lines after
  // it are the ones counted and read; without, every line is. At most 4 GiB.
  static Status Open(Env* env, const std::string& dir, const SideFile& entry, std::string* header,
                     std::unique_ptr<LineFile>* file);

  // The lines (after the header); a last line without a newline counts.
  size_t lines() const { return lines_; }
  // Whether the file ends with a newline (or holds no line to read).
  bool ends_with_newline() const { return ends_with_newline_; }
  const std::string& path() const { return path_; }

  // Line i (< lines()) without its newline, in *line, which points into *scratch.
  Status ReadLine(size_t i, std::string* scratch, std::string_view* line) const;

  // What this object keeps: the marks and, for a file served from memory, the file.
  uint64_t memory_bytes() const;

 private:
  LineFile() = default;

  std::string path_;
  std::unique_ptr<RandomAccessFile> file_;
  size_t lines_ = 0;
  bool ends_with_newline_ = true;
  // Where lines 0, k, 2k, ... (k = kLinesPerMark) start, then the end of the file: the lines of
  // mark m lie in [marks_[m], marks_[m + 1]).
  std::vector<uint64_t> marks_;
  // The XXH64 of each mark's lines, as checked at Open. ReadLine reads a mark's lines again (by a
  // range request, for a file over HTTP), after the whole-file check: the file may have changed
  // since, same length or not (a server that changed the labels between the GET and the ranges
  // changed an epoch's labels without a word). What is read is checked against these.
  std::vector<uint64_t> block_xxh64_;
};

}  // namespace shardpack
