#include "ground/memory_file.h"

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

 private:
  const std::shared_ptr<const ShardBuffer> bytes_;
  const uint64_t size_;
  const std::string name_;
};

}  // namespace

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::shared_ptr<const ShardBuffer> bytes, std::string name) {
  return std::make_unique<ShardBufferFile>(std::move(bytes), std::move(name));
}

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name) {
  return std::make_unique<StringFile>(std::move(bytes), std::move(name));
}

}  // namespace shardpack
