#include "ground/memory_file.h"

#include <cstring>

namespace shardpack {
namespace {

class MemoryFile final : public RandomAccessFile {
 public:
  MemoryFile(std::string bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      return Status::DataLoss(name_ + ": " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                              " lie past its end (" + std::to_string(bytes_.size()) + " bytes)");
    }
    std::memcpy(scratch, bytes_.data() + offset, n);
    return Status::OK();
  }

 private:
  const std::string bytes_;
  const std::string name_;
};

}  // namespace

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name) {
  return std::make_unique<MemoryFile>(std::move(bytes), std::move(name));
}

}  // namespace shardpack
