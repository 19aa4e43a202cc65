#include "ops/pack/resolution_bound.h"

#include <opencv2/imgproc.hpp>

#include "ground/image_decode_rgb.h"
#include "ground/jpeg_encoder.h"
#include "ground/jpeg_region_decoder.h"
#include "ground/opencv_imdecode.h"
#include "ground/sample_keys.h"
#include "shardpack/image.h"

namespace shardpack {

namespace {

// Decodes a JPEG at the coarsest DCT scale whose result covers `target` (as shown), upright.
Status DecodeJpegFor(std::string_view bytes, uint64_t max_pixels, cv::Size target, cv::Mat* rgb) {
  JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
  SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
  const cv::Size stored = decoder.size();
  const int orientation = JpegExifOrientation(bytes);
  const cv::Size target_stored = orientation >= 5 ? cv::Size(target.height, target.width) : target;
  cv::Mat pixels;
  cv::Rect2d box;
  SHARDPACK_RETURN_IF_ERROR(
      decoder.DecodeRegion(cv::Rect2d(0, 0, stored.width, stored.height), target_stored, false, &pixels, &box));
  pixels.copyTo(*rgb);  // out of the decoder's buffer, which the next decode reuses
  ApplyOrientation(orientation, rgb);
  return Status::OK();
}

// Resizes the sample's image fields (masks: CheckSampleFields made sure they have the image's
// shown size) to `target` by nearest neighbour, so that every value stays a class id, re-encoded
// in their own format.
Status ResizeImageFields(cv::Size target, PackItem* item) {
  for (SampleField& f : item->fields) {
    const std::string kind = FieldKind(f.name);
    if (!IsImageFieldKind(kind)) continue;
    cv::Mat stored, resized;
    const cv::Mat encoded(1, int(f.data.size()), CV_8UC1, f.data.data());
    SHARDPACK_RETURN_IF_ERROR(OpenCvImDecodeAsStored(encoded, &stored));
    if (stored.empty()) return Status::Corrupt("field " + f.name + " cannot be decoded to resize it with its image");
    cv::resize(stored, resized, target, 0, 0, cv::INTER_NEAREST);
    std::vector<uint8_t> out;
    SHARDPACK_RETURN_IF_ERROR(OpenCvImEncode("." + kind, resized, {}, &out));
    f.data.assign(reinterpret_cast<const char*>(out.data()), out.size());
  }
  return Status::OK();
}

}  // namespace

Status CheckResolutionBound(const PackOptions& o) {
  if (o.max_side == 0) return Status::OK();
  if (o.max_side < 16) {
    return Status::InvalidArgument("--max-side " + std::to_string(o.max_side) +
                                   " is too small: give at least 16 pixels (or leave it out for no bound)");
  }
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100) {
    return Status::InvalidArgument("--jpeg-quality " + std::to_string(o.jpeg_quality) + " is not in 1-100");
  }
  if (o.format == DatasetFormat::kRaw) {
    return Status::InvalidArgument(
        "--max-side bounds the images of --format wds and lmdb; raw stores pixels, sized by --resize and --crop");
  }
  return Status::OK();
}

void BoundedSize(uint32_t width, uint32_t height, const PackOptions& o, uint32_t* out_width, uint32_t* out_height) {
  const bool width_bounded = o.max_side_of_short ? width <= height : width >= height;
  const uint32_t side = width_bounded ? width : height, other = width_bounded ? height : width;
  *out_width = width, *out_height = height;
  if (o.max_side == 0 || side <= o.max_side) return;
  // other x max_side / side, to the nearest integer, halves up: (2 x other x max_side + side) / (2 x side).
  const uint64_t scaled = (2 * uint64_t(other) * o.max_side + side) / (2 * uint64_t(side));
  const uint32_t rest = uint32_t(std::max<uint64_t>(1, scaled));
  *out_width = width_bounded ? o.max_side : rest;
  *out_height = width_bounded ? rest : o.max_side;
}

Status BoundResolution(const PackOptions& o, PackItem* item) {
  if (o.max_side == 0) return Status::OK();
  const bool jpeg = item->info.format == ImageFormat::kJpeg;
  // The size as shown: EXIF orientations 5-8 swap the sides.
  uint32_t width = item->info.width, height = item->info.height;
  if (jpeg && JpegExifOrientation(item->bytes) >= 5) std::swap(width, height);
  uint32_t target_width = 0, target_height = 0;
  BoundedSize(width, height, o, &target_width, &target_height);
  if (target_width == width && target_height == height) return Status::OK();
  const cv::Size target{int(target_width), int(target_height)};
  cv::Mat rgb, resized, bgr;
  std::vector<uint8_t> encoded;
  std::string reencoded;
  try {
    if (jpeg) {
      SHARDPACK_RETURN_IF_ERROR(DecodeJpegFor(item->bytes, o.max_pixels, target, &rgb));
    } else {
      cv::Size full;
      SHARDPACK_RETURN_IF_ERROR(DecodeOrientedRgb(item->bytes, o.max_pixels, &rgb, &full));
    }
    cv::resize(rgb, resized, target, 0, 0, cv::INTER_AREA);
    if (jpeg) {
      // A grey JPEG stays grey; its ICC profile (the colour space its values mean) comes along.
      if (JpegComponents(item->bytes) == 1) cv::cvtColor(resized, resized, cv::COLOR_RGB2GRAY);
      SHARDPACK_RETURN_IF_ERROR(EncodeJpeg(resized, o.jpeg_quality, JpegIccProfile(item->bytes), &reencoded));
    } else {
      cv::cvtColor(resized, bgr, cv::COLOR_RGB2BGR);
      SHARDPACK_RETURN_IF_ERROR(OpenCvImEncode(".png", bgr, {}, &encoded));
      reencoded.assign(reinterpret_cast<const char*>(encoded.data()), encoded.size());
    }
    SHARDPACK_RETURN_IF_ERROR(ResizeImageFields(target, item));
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("cannot resize the image under --max-side: ") + e.what());
  }
  item->original = item->info;
  item->bytes = std::move(reencoded);
  item->bytes_xxh64.reset();
  return ProbeImage(item->bytes, &item->info);
}

}  // namespace shardpack
