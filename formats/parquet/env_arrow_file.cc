#include "formats/parquet/env_arrow_file.h"

#include <algorithm>
#include <cstring>

namespace shardpack {

namespace {

// A view of the mapping that keeps it alive while Arrow holds the buffer.
class MappedSlice final : public arrow::Buffer {
 public:
  MappedSlice(std::shared_ptr<MappedFile> mapped, uint64_t at, uint64_t n)
      : arrow::Buffer(reinterpret_cast<const uint8_t*>(mapped->data().data()) + at, int64_t(n)),
        mapped_(std::move(mapped)) {}

 private:
  std::shared_ptr<MappedFile> mapped_;
};

}  // namespace

Status EnvArrowFile::Open(Env* env, const std::string& path, std::shared_ptr<EnvArrowFile>* out) {
  std::unique_ptr<MappedFile> mapped;
  if (env->MapFile(path, &mapped).ok()) {
    out->reset(new EnvArrowFile(mapped->data().size(), path));
    (*out)->mapped_ = std::move(mapped);
    return Status::OK();
  }
  std::unique_ptr<shardpack::RandomAccessFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &file));
  uint64_t size = 0;
  SHARDPACK_RETURN_IF_ERROR(file->Size(&size));
  out->reset(new EnvArrowFile(size, path));
  (*out)->file_ = std::move(file);
  return Status::OK();
}

arrow::Status EnvArrowFile::Close() {
  closed_ = true;
  return arrow::Status::OK();
}

arrow::Status EnvArrowFile::Seek(int64_t position) {
  if (position < 0) return arrow::Status::Invalid(path_, ": seek to ", position);
  position_ = position;
  return arrow::Status::OK();
}

arrow::Result<int64_t> EnvArrowFile::Read(int64_t nbytes, void* out) {
  ARROW_ASSIGN_OR_RAISE(const int64_t n, ReadAt(position_, nbytes, /*allow_short_read=*/true, out));
  position_ += n;
  return n;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> EnvArrowFile::Read(int64_t nbytes) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position_, nbytes, /*allow_short_read=*/true));
  position_ += buffer->size();
  return buffer;
}

arrow::Result<int64_t> EnvArrowFile::ReadAt(int64_t position, int64_t nbytes, void* out) {
  return ReadAt(position, nbytes, /*allow_short_read=*/true, out);
}

arrow::Result<int64_t> EnvArrowFile::ReadAt(int64_t position, int64_t nbytes, bool allow_short_read, void* out) {
  if (closed_) return arrow::Status::Invalid(path_, " is closed");
  if (position < 0 || nbytes < 0) return arrow::Status::Invalid(path_, ": read of ", nbytes, " bytes at ", position);
  // Arrow asks past the end when a footer claims more than the file holds: a short read, which
  // the Parquet reader reports as a damaged file (or an error here when it asked for all).
  const uint64_t at = std::min<uint64_t>(uint64_t(position), size_);
  const uint64_t n = std::min<uint64_t>(uint64_t(nbytes), size_ - at);
  if (n < uint64_t(nbytes) && !allow_short_read) {
    return arrow::Status::IOError(path_, ": ", nbytes, " bytes at ", position, " are past its end (", size_, " bytes)");
  }
  if (n == 0) return 0;
  if (mapped_ != nullptr) {
    std::memcpy(out, mapped_->data().data() + at, size_t(n));
    return int64_t(n);
  }
  const Status s = file_->Read(at, size_t(n), static_cast<char*>(out));
  if (!s.ok()) return arrow::Status::IOError(s.message());
  return int64_t(n);
}

arrow::Result<std::shared_ptr<arrow::Buffer>> EnvArrowFile::ReadAt(int64_t position, int64_t nbytes) {
  return ReadAt(position, nbytes, /*allow_short_read=*/true);
}

arrow::Result<std::shared_ptr<arrow::Buffer>> EnvArrowFile::ReadAt(int64_t position, int64_t nbytes,
                                                                   bool allow_short_read) {
  if (nbytes < 0) return arrow::Status::Invalid(path_, ": read of ", nbytes, " bytes");
  if (mapped_ != nullptr && !closed_ && position >= 0) {
    const uint64_t at = std::min<uint64_t>(uint64_t(position), size_);
    const uint64_t n = std::min<uint64_t>(uint64_t(nbytes), size_ - at);
    if (n < uint64_t(nbytes) && !allow_short_read) {
      return arrow::Status::IOError(path_, ": ", nbytes, " bytes at ", position, " are past its end (", size_,
                                    " bytes)");
    }
    return std::shared_ptr<arrow::Buffer>(std::make_shared<MappedSlice>(mapped_, at, n));
  }
  const int64_t available = position >= 0 && uint64_t(position) < size_ ? int64_t(size_ - uint64_t(position)) : 0;
  ARROW_ASSIGN_OR_RAISE(std::unique_ptr<arrow::ResizableBuffer> buffer,
                        arrow::AllocateResizableBuffer(std::min(nbytes, available), ArrowPool()));
  ARROW_ASSIGN_OR_RAISE(const int64_t n, ReadAt(position, nbytes, allow_short_read, buffer->mutable_data()));
  ARROW_RETURN_NOT_OK(buffer->Resize(n, /*shrink_to_fit=*/false));
  return std::shared_ptr<arrow::Buffer>(std::move(buffer));
}

}  // namespace shardpack
