#include "ground/memory_file.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace shardpack {
namespace {

Status PastTheEnd(const std::string& name, uint64_t offset, size_t n, uint64_t size) {
  return Status::DataLoss(name + ": " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                          " lie past its end (" + std::to_string(size) + " bytes)");
}

class StringFile final : public RandomAccessFile {
 public:
  StringFile(std::string bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) return PastTheEnd(name_, offset, n, bytes_.size());
    std::memcpy(scratch, bytes_.data() + offset, n);
    return Status::OK();
  }
  Status Size(uint64_t* size) const override {
    *size = bytes_.size();
    return Status::OK();
  }
  uint64_t memory_bytes() const override { return bytes_.capacity(); }

 private:
  const std::string bytes_;
  const std::string name_;
};

class ShardBufferFile final : public RandomAccessFile {
 public:
  ShardBufferFile(std::shared_ptr<const ShardBuffer> bytes, std::string name)
      : bytes_(std::move(bytes)), size_(bytes_->size()), name_(std::move(name)) {}
  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > size_ || n > size_ - offset) return PastTheEnd(name_, offset, n, size_);
    return bytes_->Read(offset, n, scratch).WithPrefix(name_ + ": ");
  }
  Status Size(uint64_t* size) const override {
    *size = size_;
    return Status::OK();
  }
  uint64_t memory_bytes() const override { return size_; }

 private:
  const std::shared_ptr<const ShardBuffer> bytes_;
  const uint64_t size_;
  const std::string name_;
};

class SequentialOverRandom final : public SequentialFile {
 public:
  SequentialOverRandom(std::unique_ptr<RandomAccessFile> file, uint64_t size) : file_(std::move(file)), size_(size) {}
  Status Read(size_t n, char* scratch, size_t* bytes_read) override {
    const uint64_t take = std::min<uint64_t>(n, size_ - std::min(size_, offset_));
    *bytes_read = size_t(take);
    if (take == 0) return Status::OK();
    SHARDPACK_RETURN_IF_ERROR(file_->Read(offset_, size_t(take), scratch));
    offset_ += take;
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    offset_ += n;
    return Status::OK();
  }

 private:
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t size_;
  uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<SequentialFile> NewSequentialOverRandom(std::unique_ptr<RandomAccessFile> file, uint64_t size) {
  return std::make_unique<SequentialOverRandom>(std::move(file), size);
}

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::shared_ptr<const ShardBuffer> bytes, std::string name) {
  return std::make_unique<ShardBufferFile>(std::move(bytes), std::move(name));
}

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name) {
  return std::make_unique<StringFile>(std::move(bytes), std::move(name));
}

}  // namespace shardpack
