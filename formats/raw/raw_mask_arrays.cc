#include "formats/raw/raw_mask_arrays.h"

#include <algorithm>

#include "formats/raw/raw_format.h"
#include "ground/checksum.h"
#include "ground/side_file.h"

namespace shardpack {

void RawMaskArrays::Start(const std::string& shard_file, bool fixed, uint32_t height, uint32_t width) {
  Discard();
  shard_file_ = shard_file;
  fixed_ = fixed;
  height_ = height;
  width_ = width;
  samples_ = 0;
  pixels_ = 0;
}

std::string RawMaskArrays::TmpPath(const std::string& field) const {
  return JoinPath(dir_, RawMaskFileName(shard_file_, field) + ".tmp");
}

Status RawMaskArrays::AppendZeros(WritableFile* file, uint64_t n) {
  static const std::string zeros(1 << 20, '\0');
  for (; n > 0; n -= std::min<uint64_t>(n, zeros.size())) {
    SHARDPACK_RETURN_IF_ERROR(file->Append(std::string_view(zeros.data(), std::min<uint64_t>(n, zeros.size()))));
  }
  return Status::OK();
}

// A field first seen now: the header's placeholder, then empty slots for the samples before.
Status RawMaskArrays::Open(const std::string& field, Array* array) {
  SHARDPACK_RETURN_IF_ERROR(env_->NewWritableFile(TmpPath(field), &array->file));
  SHARDPACK_RETURN_IF_ERROR(array->file->Append(std::string(kNpyHeaderBytes, ' ')));
  SHARDPACK_RETURN_IF_ERROR(AppendZeros(array->file.get(), pixels_));
  array->present.assign(samples_, '\0');
  return Status::OK();
}

Status RawMaskArrays::Add(const std::vector<SampleMask>* masks, uint32_t width, uint32_t height) {
  const uint64_t pixels = uint64_t(width) * height;
  if (masks != nullptr) {
    for (const SampleMask& m : *masks) {
      if (m.pixels.size() != pixels) {
        return Status::InvalidArgument("mask " + m.name + " has " + std::to_string(m.pixels.size()) +
                                       " pixels, its image " + std::to_string(pixels));
      }
      auto [it, added] = arrays_.try_emplace(m.name);
      if (added) SHARDPACK_RETURN_IF_ERROR(Open(m.name, &it->second));
    }
  }
  for (auto& [field, array] : arrays_) {
    const SampleMask* mask = nullptr;
    if (masks != nullptr) {
      for (const SampleMask& m : *masks) {
        if (m.name == field) mask = &m;
      }
    }
    SHARDPACK_RETURN_IF_ERROR(mask != nullptr ? array.file->Append(mask->pixels)
                                              : AppendZeros(array.file.get(), pixels));
    array.present.push_back(mask != nullptr ? '\1' : '\0');
  }
  ++samples_;
  pixels_ += pixels;
  return Status::OK();
}

Status RawMaskArrays::Publish(std::vector<SideFile>* side_files) {
  for (auto& [field, array] : arrays_) {
    const std::string header = fixed_ ? NpyHeader("|u1", {samples_, height_, width_}) : NpyHeader("|u1", {pixels_});
    SHARDPACK_RETURN_IF_ERROR(array.file->WriteAt(0, header));
    if (sync_) SHARDPACK_RETURN_IF_ERROR(array.file->Sync());
    SHARDPACK_RETURN_IF_ERROR(array.file->Close());
    array.file.reset();
    SideFile side;
    side.file = RawMaskFileName(shard_file_, field);
    uint64_t checksum = 0, bytes = 0;
    SHARDPACK_RETURN_IF_ERROR(ChecksumFile(env_, TmpPath(field), &checksum, &bytes));
    side.xxh64 = ChecksumHex(checksum);
    SHARDPACK_RETURN_IF_ERROR(env_->RenameFile(TmpPath(field), JoinPath(dir_, side.file)));
    side_files->push_back(side);
    SideFile presence;
    SHARDPACK_RETURN_IF_ERROR(PublishSideFile(env_, dir_, RawMaskPresenceFileName(shard_file_, field),
                                              NpyHeader("|u1", {samples_}) + array.present, sync_, &presence));
    side_files->push_back(presence);
  }
  arrays_.clear();
  return Status::OK();
}

void RawMaskArrays::Discard() {
  for (auto& [field, array] : arrays_) {
    if (array.file != nullptr) (void)array.file->Close();
    (void)env_->RemoveFile(TmpPath(field));
  }
  arrays_.clear();
}

}  // namespace shardpack
