#include "formats/wds/tar_shard_writer.h"

#include <cstdio>
#include <cstring>

#include "formats/wds/tar_format.h"

namespace shardpack {
namespace {

// Writes `value` as zero-padded octal in `width - 1` digits followed by NUL.
void PutOctal(char* field, int width, uint64_t value) {
  std::snprintf(field, static_cast<size_t>(width), "%0*llo", width - 1, static_cast<unsigned long long>(value));
}

const char kZeros[tar::kBlockSize] = {};

}  // namespace

std::string UstarHeader(std::string_view name, uint64_t size) {
  std::string header(tar::kBlockSize, '\0');
  char* h = header.data();
  std::memcpy(h + tar::kNameOffset, name.data(), std::min<size_t>(name.size(), tar::kNameSize));
  std::memcpy(h + tar::kModeOffset, tar::kFileMode, 7);
  std::memcpy(h + tar::kUidOffset, tar::kOwnerId, 7);
  std::memcpy(h + tar::kGidOffset, tar::kOwnerId, 7);
  PutOctal(h + tar::kSizeOffset, tar::kSizeSize, size);
  PutOctal(h + tar::kMtimeOffset, tar::kMtimeSize, tar::kMtime);
  h[tar::kTypeOffset] = tar::kRegularFile;
  std::memcpy(h + tar::kMagicOffset,
              "ustar\0"
              "00",
              8);
  std::memcpy(h + tar::kUnameOffset, tar::kOwnerName, sizeof(tar::kOwnerName) - 1);
  std::memcpy(h + tar::kGnameOffset, tar::kOwnerName, sizeof(tar::kOwnerName) - 1);
  // The checksum is the byte sum of the header with the checksum field read as spaces.
  std::memset(h + tar::kChecksumOffset, ' ', tar::kChecksumSize);
  unsigned sum = 0;
  for (unsigned char c : header) sum += c;
  std::snprintf(h + tar::kChecksumOffset, 7, "%06o", sum);  // six digits, NUL, space
  h[tar::kChecksumOffset + 7] = ' ';
  return header;
}

TarShardWriter::TarShardWriter(std::unique_ptr<WritableFile> file) : file_(std::move(file)) {}

Status TarShardWriter::Write(std::string_view bytes, bool in_range) {
  SHARDPACK_RETURN_IF_ERROR(file_->Append(bytes));
  file_hash_.Update(bytes);
  if (in_range) range_hash_.Update(bytes);
  size_ += bytes.size();
  return Status::OK();
}

void TarShardWriter::BeginRange() { range_hash_.Reset(); }

Status TarShardWriter::AddMember(std::string_view name, std::string_view data, uint64_t* data_offset) {
  if (name.empty() || name.size() > tar::kMaxNameLength) {
    return Status::InvalidArgument("tar member name '" + std::string(name) + "' is empty or longer than " +
                                   std::to_string(tar::kMaxNameLength) + " bytes");
  }
  if (data.size() > tar::kMaxMemberSize) {
    return Status::InvalidArgument("tar member '" + std::string(name) + "' is too large for ustar");
  }
  SHARDPACK_RETURN_IF_ERROR(Write(UstarHeader(name, data.size()), true));
  *data_offset = size_;
  SHARDPACK_RETURN_IF_ERROR(Write(data, true));
  uint64_t pad = tar::PaddedSize(data.size()) - data.size();
  return Write(std::string_view(kZeros, pad), true);
}

Status TarShardWriter::Finish(bool sync) {
  SHARDPACK_RETURN_IF_ERROR(Write(std::string_view(kZeros, tar::kBlockSize), false));
  SHARDPACK_RETURN_IF_ERROR(Write(std::string_view(kZeros, tar::kBlockSize), false));
  if (sync) SHARDPACK_RETURN_IF_ERROR(file_->Sync());
  return file_->Close();
}

}  // namespace shardpack
