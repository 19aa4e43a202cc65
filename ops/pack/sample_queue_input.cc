#include "ops/pack/sample_queue_input.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>

#include "ground/checksum.h"
#include "ground/jpeg_encoder.h"
#include "ground/opencv_imdecode.h"
#include "ground/printable.h"
#include "ground/sample_keys.h"

namespace shardpack {

SampleQueueInput::SampleQueueInput(Options options) : options_(std::move(options)) {
  for (size_t i = 0; i < options_.classes.size(); ++i) class_index_.emplace(options_.classes[i], int32_t(i));
}

Status SampleQueueInput::Check(const WriterSample& s, int32_t* label) const {
  // The sample's name is built only for a refusal: Check runs for every sample.
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(
        (s.key.empty() ? "sample " + std::to_string(pushed_) : "sample '" + Printable(s.key, 100) + "'") + ": " + why);
  };
  if (s.image.empty() == s.pixels.rgb.empty()) {
    return bad(s.image.empty() ? "no image: give its encoded bytes or its pixels"
                               : "both encoded bytes and pixels: give one image");
  }
  if (!s.pixels.rgb.empty() && (s.pixels.width == 0 || s.pixels.height == 0 ||
                                s.pixels.rgb.size() != uint64_t(s.pixels.width) * s.pixels.height * 3)) {
    return bad("pixels of " + std::to_string(s.pixels.width) + "x" + std::to_string(s.pixels.height) + " need " +
               std::to_string(uint64_t(s.pixels.width) * s.pixels.height * 3) + " bytes of RGB, not " +
               std::to_string(s.pixels.rgb.size()));
  }
  if ((keyed_ == 1 && s.key.empty()) || (keyed_ == 0 && !s.key.empty())) {
    return bad("give a key to every sample or to none (the others take index keys, which a given key could repeat)");
  }
  if (!s.key.empty()) {
    if (s.key.size() > kMaxKeyLength) return bad("the key is longer than " + std::to_string(kMaxKeyLength) + " bytes");
    for (const char c : s.key) {
      if (c == '.' || c == '/' || static_cast<unsigned char>(c) < 0x20) {
        return bad(
            "a key may not hold '.', '/' or control characters (WebDataset splits a member's name at its "
            "first dot)");
      }
    }
    if (key_hashes_.count(Xxh64(s.key))) return bad("the key was given to an earlier sample; keys must be unique");
  }
  *label = s.label;
  if (!s.class_name.empty()) {
    const auto it = class_index_.find(s.class_name);
    if (it == class_index_.end()) {
      return bad("class '" + Printable(s.class_name, 100) + "' is not in the writer's class list (" +
                 std::to_string(options_.classes.size()) + " classes)");
    }
    if (s.label >= 0 && s.label != it->second) {
      return bad("label " + std::to_string(s.label) + " and class '" + Printable(s.class_name, 100) + "' (label " +
                 std::to_string(it->second) + ") disagree");
    }
    *label = it->second;
  } else if (s.label < -1 || (!options_.classes.empty() && s.label >= int64_t(options_.classes.size()))) {
    return bad("label " + std::to_string(s.label) + " is outside the class list (-1 for none, 0.." +
               std::to_string(int64_t(options_.classes.size()) - 1) + ")");
  }
  for (const auto& [name, data] : s.fields) {
    std::string problem = FieldNameProblem(name);
    if (problem.empty() && name == "meta.json") problem = "the name is reserved for shardpack's metadata";
    if (problem.empty() && name == "cls") problem = "the class is the sample's label (give label or class_name)";
    if (problem.empty() && name.find('.') == std::string::npos && IsImageFieldKind(FieldKind(name))) {
      problem = "a sample has one image (name a mask like seg.png)";
    }
    if (!problem.empty()) return bad("field '" + Printable(name, 100) + "': " + problem);
  }
  return Status::OK();
}

bool SampleQueueInput::BatchReady() const {
  const size_t batch = std::clamp<size_t>(options_.max_samples / 4, 1, 64);
  return queue_.size() >= batch ||
         (!queue_.empty() && (queued_bytes_ >= options_.max_bytes / 2 || producers_waiting_ > 0));
}

bool SampleQueueInput::BelowLowWater() const {
  return queue_.size() <= options_.max_samples / 2 && queued_bytes_ <= options_.max_bytes / 2;
}

uint64_t SampleQueueInput::BytesOf(const WriterSample& s) {
  uint64_t bytes = s.image.size() + s.pixels.rgb.size();
  for (const auto& [name, data] : s.fields) bytes += data.size();
  return bytes;
}

Status SampleQueueInput::Push(WriterSample sample) {
  const uint64_t bytes = BytesOf(sample);
  std::unique_lock<std::mutex> lock(mu_);
  // A sample larger than the byte bound still goes in, alone: the bound must not stop a writer.
  const auto room = [&] {
    return queue_.size() < options_.max_samples && (queue_.empty() || queued_bytes_ + bytes <= options_.max_bytes);
  };
  if (!room()) {
    // Full: wait until the queue is half empty, so that the producer wakes once per half a queue
    // rather than once per sample (Next() signals at that mark).
    ++producers_waiting_;
    if (consumer_waiting_) not_empty_.notify_one();  // a full queue is worth taking, batch or not
    not_full_.wait(lock, [&] { return !failed_.ok() || closed_ || (room() && BelowLowWater()); });
    --producers_waiting_;
  }
  if (!failed_.ok()) return failed_;
  if (closed_) return Status::InvalidArgument("the writer is closed: write before close()");
  int32_t label = -1;
  SHARDPACK_RETURN_IF_ERROR(Check(sample, &label));
  sample.label = label;
  if (!sample.key.empty()) key_hashes_.insert(Xxh64(sample.key));
  keyed_ = sample.key.empty() ? 0 : 1;
  ++pushed_;
  queued_bytes_ += bytes;
  queue_.push_back({std::move(sample), bytes});
  if (consumer_waiting_ && BatchReady()) not_empty_.notify_one();
  return Status::OK();
}

void SampleQueueInput::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  not_empty_.notify_all();
  not_full_.notify_all();
}

void SampleQueueInput::Fail(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.ok()) failed_ = why;
  queue_.clear();
  queued_bytes_ = 0;
  not_empty_.notify_all();
  not_full_.notify_all();
}

std::string SampleQueueInput::TakeSpareBuffer(size_t size) {
  std::string buffer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The last few returned are the likeliest to be in the cache; the first large enough wins.
    for (size_t i = spare_.size(), looked = 0; i > 0 && looked < 8; --i, ++looked) {
      if (spare_[i - 1].capacity() >= size) {
        spare_bytes_ -= spare_[i - 1].capacity();
        buffer = std::move(spare_[i - 1]);
        spare_.erase(spare_.begin() + std::ptrdiff_t(i - 1));
        break;
      }
    }
  }
  buffer.clear();
  if (buffer.capacity() < size) buffer.reserve(size + size / 4);
  return buffer;
}

uint64_t SampleQueueInput::pushed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pushed_;
}

Status SampleQueueInput::Next(PackItem* item, bool* done) {
  Queued queued;
  uint64_t number = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty()) {
      // Wait for a batch rather than for one sample: a producer slower than the pipeline would
      // otherwise wake it (a futex call and two context switches) for every sample it writes.
      consumer_waiting_ = true;
      not_empty_.wait(lock, [&] { return !failed_.ok() || closed_ || BatchReady(); });
      consumer_waiting_ = false;
    }
    if (!failed_.ok()) return failed_;
    *done = queue_.empty();
    if (*done) return Status::OK();
    queued = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= queued.bytes;
    number = taken_++;
    // The slot's last image buffer goes back to the producers (TakeSpareBuffer) instead of to malloc.
    const size_t capacity = item->loaded ? item->bytes.capacity() : 0;
    if (capacity > 0 && spare_.size() < options_.max_samples && spare_bytes_ + capacity <= options_.max_bytes / 2) {
      spare_bytes_ += capacity;
      spare_.push_back(std::move(item->bytes));
    }
    if (producers_waiting_ > 0 && BelowLowWater()) not_full_.notify_all();
  }
  WriterSample& s = queued.sample;
  item->relpath = std::move(s.relpath);
  item->key = std::move(s.key);
  // Skips name the sample as the caller knows it: its key, its path, or its place among the writes.
  item->report_name = !item->key.empty()       ? "sample '" + item->key + "'"
                      : !item->relpath.empty() ? std::string()
                                               : "sample " + std::to_string(number) + " (counting writes from 0)";
  item->label = s.label;
  item->extra = nullptr;
  item->fields.clear();
  item->field_relpaths.clear();
  for (auto& [name, data] : s.fields) item->fields.push_back({name, std::move(data)});  // sorted by name
  item->loaded = s.pixels.rgb.empty();
  if (item->loaded) {
    item->bytes = std::move(s.image);
  } else {
    item->bytes.clear();
    item->pixels = std::move(s.pixels);
  }
  return Status::OK();
}

Status SampleQueueInput::Load(PackItem* item) const {
  const DecodedImage& p = item->pixels;
  const cv::Mat rgb(int(p.height), int(p.width), CV_8UC3, const_cast<uint8_t*>(p.rgb.data()));
  if (options_.pixel_encoding == Options::PixelEncoding::kJpeg) {
    return EncodeJpeg(rgb, options_.jpeg_quality, "", &item->bytes);
  }
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uint8_t> encoded;
  const bool bmp = options_.pixel_encoding == Options::PixelEncoding::kBmp;
  SHARDPACK_RETURN_IF_ERROR(OpenCvImEncode(bmp ? ".bmp" : ".png", bgr, {}, &encoded));
  item->bytes.assign(encoded.begin(), encoded.end());
  return Status::OK();
}

}  // namespace shardpack
