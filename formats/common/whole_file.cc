#include "formats/common/whole_file.h"

namespace shardpack {

Status WholeFile::Map(Env* env, const std::string& path, uint64_t max_bytes) {
  Clear();
  uint64_t size = 0;
  SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(path, &size));
  if (size > max_bytes) {
    return Status::InvalidArgument(path + " holds " + std::to_string(size) + " bytes, more than the limit of " +
                                   std::to_string(max_bytes));
  }
  SHARDPACK_RETURN_IF_ERROR(env->MapFile(path, &mapped_));
  bytes_ = mapped_->data();
  return Status::OK();
}

void WholeFile::Own(std::string bytes) {
  Clear();
  owned_ = std::move(bytes);
  bytes_ = owned_;
}

void WholeFile::Clear() {
  bytes_ = {};
  mapped_.reset();
  owned_.clear();
  owned_.shrink_to_fit();
}

}  // namespace shardpack
