#include "ground/memory_file.h"

#include <cstring>
#include <string_view>

namespace shardpack {
namespace {

class MemoryFile final : public RandomAccessFile {
 public:
  // `bytes` lies in memory that `owner` keeps.
  MemoryFile(std::shared_ptr<const void> owner, std::string_view bytes, std::string name)
      : owner_(std::move(owner)), bytes_(bytes), name_(std::move(name)) {}
  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      return Status::DataLoss(name_ + ": " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
                              " lie past its end (" + std::to_string(bytes_.size()) + " bytes)");
    }
    std::memcpy(scratch, bytes_.data() + offset, n);
    return Status::OK();
  }

 private:
  const std::shared_ptr<const void> owner_;
  const std::string_view bytes_;
  const std::string name_;
};

}  // namespace

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::shared_ptr<const ShardBuffer> bytes, std::string name) {
  const std::string_view view = bytes->view();
  return std::make_unique<MemoryFile>(std::move(bytes), view, std::move(name));
}

std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const std::string_view view = *owned;
  return std::make_unique<MemoryFile>(std::move(owned), view, std::move(name));
}

}  // namespace shardpack
