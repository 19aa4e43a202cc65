#include "ground/line_file.h"

#include <algorithm>
#include <cstring>

#include "ground/checksum.h"
#include "ground/side_file.h"

namespace shardpack {

Status LineFile::Open(Env* env, const std::string& dir, const SideFile& entry, std::string* header,
                      std::unique_ptr<LineFile>* out) {
  std::unique_ptr<LineFile> f(new LineFile());
  f->path_ = JoinPath(dir, entry.file);
  SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(f->path_, &f->file_));
  uint64_t size = 0;
  SHARDPACK_RETURN_IF_ERROR(f->file_->Size(&size));
  if (size > (uint64_t(1) << 32)) {
    return Status::InvalidArgument(f->path_ + " holds " + std::to_string(size) +
                                   " bytes, more than a side file may (4 GiB)");
  }
  std::string text(size_t(size), '\0');
  if (size > 0) SHARDPACK_RETURN_IF_ERROR(f->file_->Read(0, size_t(size), text.data()));
  SHARDPACK_RETURN_IF_ERROR(CheckSideFile(f->path_, entry, text));
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* at = begin;
  if (header != nullptr) {
    at = static_cast<const char*>(std::memchr(begin, '\n', text.size()));
    header->assign(begin, at == nullptr ? end : at);
    at = at == nullptr ? end : at + 1;
  }
  while (at < end) {
    if (f->lines_ % kLinesPerMark == 0) f->marks_.push_back(uint64_t(at - begin));
    ++f->lines_;
    const char* newline = static_cast<const char*>(std::memchr(at, '\n', size_t(end - at)));
    f->ends_with_newline_ = newline != nullptr;
    at = newline == nullptr ? end : newline + 1;
  }
  f->marks_.push_back(text.size());
  f->marks_.shrink_to_fit();  // kept for as long as the shard is: no room for marks that never come
  f->block_xxh64_.reserve(f->marks_.size() - 1);
  for (size_t m = 0; m + 1 < f->marks_.size(); ++m) {
    f->block_xxh64_.push_back(Xxh64(std::string_view(text).substr(f->marks_[m], f->marks_[m + 1] - f->marks_[m])));
  }
  *out = std::move(f);
  return Status::OK();
}

Status LineFile::ReadLine(size_t i, std::string* scratch, std::string_view* line) const {
  if (i >= lines_) {
    return Status::InvalidArgument(path_ + ": line " + std::to_string(i) + " asked for, it has " +
                                   std::to_string(lines_));
  }
  const size_t mark = i / kLinesPerMark;
  const uint64_t from = marks_[mark];
  scratch->resize(size_t(marks_[mark + 1] - from));
  SHARDPACK_RETURN_IF_ERROR(file_->Read(from, scratch->size(), scratch->data()));
  if (Xxh64(*scratch) != block_xxh64_[mark]) {
    return Status::DataLoss(path_ + " changed since it was checked: lines " + std::to_string(mark * kLinesPerMark) +
                            " to " + std::to_string(std::min(lines_, (mark + 1) * kLinesPerMark) - 1) +
                            " read now differ from the file opened (open the dataset again)");
  }
  std::string_view lines(*scratch);
  for (size_t skip = i % kLinesPerMark; skip > 0; --skip) {
    const size_t newline = lines.find('\n');
    // The file changed in place since it was checked: its lines are no longer where they were.
    if (newline == std::string_view::npos) return Status::DataLoss(path_ + " changed while it was being read");
    lines.remove_prefix(newline + 1);
  }
  *line = lines.substr(0, lines.find('\n'));
  return Status::OK();
}

uint64_t LineFile::memory_bytes() const {
  return sizeof(*this) + path_.capacity() + (marks_.capacity() + block_xxh64_.capacity()) * sizeof(uint64_t) +
         file_->memory_bytes();
}

}  // namespace shardpack
