#include "ops/read/buffered_sample_reader.h"

namespace shardpack {

void BufferedSampleReader::Keep(uint64_t index) {
  auto kept = std::make_shared<Kept>();
  const DatasetReader& below = inner();
  kept->status = below.Read(index, &kept->sample);
  if (kept->status.ok()) {
    for (const std::string& name : fields_) {
      Piece& p = kept->fields[name];
      p.status = below.ReadField(index, name, &p.bytes, &p.present);
    }
    if (!mask_.empty()) {
      // As the loader reads it: stored pixels (raw) as pixels, an encoded image's mask as its file.
      Piece& p = kept->sample.encoded.empty() ? kept->mask_pixels : kept->fields[mask_];
      p.status = kept->sample.encoded.empty() ? below.ReadMaskPixels(index, mask_, &p.bytes, &p.present)
                                              : below.ReadField(index, mask_, &p.bytes, &p.present);
    }
  }
  kept->bytes = kept->sample.encoded.size() + kept->sample.pixels.rgb.size() + kept->mask_pixels.bytes.size();
  for (const auto& [name, piece] : kept->fields) kept->bytes += piece.bytes.size();
  std::lock_guard<std::mutex> lock(mu_);
  kept_bytes_ += kept->bytes;
  if (auto old = kept_.find(index); old != kept_.end()) kept_bytes_ -= old->second->bytes;
  kept_[index] = std::move(kept);
}

void BufferedSampleReader::Forget(uint64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = kept_.find(index);
  if (it == kept_.end()) return;
  kept_bytes_ -= it->second->bytes;
  kept_.erase(it);
}

void BufferedSampleReader::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  kept_.clear();
  kept_bytes_ = 0;
}

uint64_t BufferedSampleReader::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_bytes_;
}

Status BufferedSampleReader::Read(uint64_t index, ReadSample* out) const {
  std::shared_ptr<const Kept> kept;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = kept_.find(index);
    if (it != kept_.end()) kept = it->second;
  }
  if (kept == nullptr) return ForwardingDatasetReader::Read(index, out);
  SHARDPACK_RETURN_IF_ERROR(kept->status);
  *out = kept->sample;
  return Status::OK();
}

const BufferedSampleReader::Piece* BufferedSampleReader::FindPiece(uint64_t index, const std::string& name,
                                                                   bool pixels) const {
  const auto it = kept_.find(index);
  if (it == kept_.end() || !it->second->status.ok()) return nullptr;
  if (pixels) return name == mask_ && it->second->sample.encoded.empty() ? &it->second->mask_pixels : nullptr;
  const auto f = it->second->fields.find(name);
  return f == it->second->fields.end() ? nullptr : &f->second;
}

bool BufferedSampleReader::ServeKept(uint64_t index, const std::string& name, bool pixels, std::string* data,
                                     bool* present, Status* status) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Piece* p = FindPiece(index, name, pixels);
  if (p == nullptr) return false;
  *status = p->status;
  if (status->ok()) *data = p->bytes, *present = p->present;
  return true;
}

Status BufferedSampleReader::ReadField(uint64_t index, const std::string& name, std::string* data,
                                       bool* present) const {
  Status s;
  if (ServeKept(index, name, /*pixels=*/false, data, present, &s)) return s;
  return ForwardingDatasetReader::ReadField(index, name, data, present);
}

Status BufferedSampleReader::ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels,
                                            bool* present) const {
  Status s;
  if (ServeKept(index, name, /*pixels=*/true, pixels, present, &s)) return s;
  return ForwardingDatasetReader::ReadMaskPixels(index, name, pixels, present);
}

}  // namespace shardpack
