// Fuzz target: image files, the hostile input pack and the loader see most. Probe, full decode,
// and the crop decode (libjpeg region decoding for JPEG), with a pixel limit as pack sets it, so
// a header claiming a gigapixel is refused before any allocation.
#include <cstdint>
#include <string_view>

#include "ground/image_decode_rgb.h"
#include "shardpack/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr uint64_t kMaxPixels = 4'000'000;
  shardpack::ImageInfo info;
  if (!shardpack::ProbeImage(bytes, &info).ok()) return 0;
  shardpack::DecodedImage image;
  (void)shardpack::DecodeImage(bytes, kMaxPixels, &image);
  cv::Mat out;
  (void)shardpack::DecodeCrop(
      bytes, kMaxPixels,
      [](cv::Size full) {
        shardpack::CropPlan plan;
        plan.box = cv::Rect2d(full.width / 4.0, full.height / 3.0, full.width / 2.0, full.height / 2.0);
        plan.out = cv::Size(24, 16);
        return plan;
      },
      true, &out);
  shardpack::TransformOptions t;
  t.resize_shorter = 20;
  t.crop_height = t.crop_width = 16;
  t.max_pixels = kMaxPixels;
  (void)shardpack::DecodeAndTransform(bytes, t, &image);
  return 0;
}
