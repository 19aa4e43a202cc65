#include "ops/pack/resolution_bound.h"

#include <opencv2/imgproc.hpp>

#include "ground/codec_util.h"
#include "ground/image_decode_rgb.h"
#include "ground/jpeg_encoder.h"
#include "ground/jpeg_region_decoder.h"
#include "ground/opencv_imdecode.h"
#include "ground/sample_keys.h"
#include "shardpack/image.h"

namespace shardpack {

namespace {

// Decodes a JPEG at the coarsest DCT scale whose result covers `target` (as shown), upright. *rgb
// may point into this thread's decoder buffer: the caller resizes it before the thread decodes again.
Status DecodeJpegFor(std::string_view bytes, uint64_t max_pixels, cv::Size target, cv::Mat* rgb) {
  JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
  SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
  const cv::Size stored = decoder.size();
  const int orientation = JpegExifOrientation(bytes);
  const cv::Size target_stored = SizeAsShown(target, orientation);  // as stored (the swap undoes itself)
  cv::Rect2d box;
  SHARDPACK_RETURN_IF_ERROR(
      decoder.DecodeRegion(cv::Rect2d(0, 0, stored.width, stored.height), target_stored, false, rgb, &box));
  ApplyOrientation(orientation, rgb);  // a rotation copies; orientation 1 leaves *rgb in the buffer
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

// A lossless image (PNG, WebP, BMP) as stored, 8-bit: grey, BGR, or BGRA with its alpha.
Status DecodeLossless(std::string_view bytes, uint64_t max_pixels, cv::Mat* pixels) {
  ImageInfo info;
  SHARDPACK_RETURN_IF_ERROR(ProbeImage(bytes, &info));
  if (uint64_t(info.width) * info.height > max_pixels) return TooManyPixels(info.width, info.height, max_pixels);
  const cv::Mat encoded(1, int(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  SHARDPACK_RETURN_IF_ERROR(OpenCvImDecodeAsStored(encoded, pixels));
  if (pixels->empty()) return Status::Corrupt(std::string(ImageFormatName(info.format)) + " data cannot be decoded");
  if (pixels->depth() == CV_16U) pixels->convertTo(*pixels, CV_8U, 1.0 / 257);
  return Status::OK();
}

// Lossless pixels (DecodeLossless) as EncodeJpeg takes them: grey stays grey, colour becomes RGB,
// and alpha is composited on white (a JPEG has no alpha; white is what most viewers show under it).
cv::Mat JpegReady(const cv::Mat& pixels) {
  cv::Mat rgb;
  if (pixels.channels() == 1) return pixels;
  if (pixels.channels() == 3) {
    cv::cvtColor(pixels, rgb, cv::COLOR_BGR2RGB);
    return rgb;
  }
  rgb.create(pixels.size(), CV_8UC3);
  for (int y = 0; y < pixels.rows; ++y) {
    const uint8_t* in = pixels.ptr<uint8_t>(y);
    uint8_t* out = rgb.ptr<uint8_t>(y);
    for (int x = 0; x < pixels.cols; ++x, in += 4, out += 3) {
      const int a = in[3];
      for (int c = 0; c < 3; ++c) out[c] = uint8_t((in[2 - c] * a + 255 * (255 - a) + 127) / 255);
    }
  }
  return rgb;
}

}  // namespace

Status CheckResolutionBound(const PackOptions& o) {
  if (o.max_side == 0 && !o.lossless_as_jpeg) return Status::OK();
  if (o.max_side != 0 && o.max_side < 16) {
    return Status::InvalidArgument("--max-side " + std::to_string(o.max_side) +
                                   " is too small: give at least 16 pixels (or leave it out for no bound)");
  }
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100) {
    return Status::InvalidArgument("--jpeg-quality " + std::to_string(o.jpeg_quality) + " is not in 1-100");
  }
  if (o.format == DatasetFormat::kRaw) {
    return Status::InvalidArgument(std::string(o.max_side != 0 ? "--max-side" : "--lossless-as-jpeg") +
                                   " re-encodes the images of --format wds and lmdb; raw stores pixels, sized by "
                                   "--resize and --crop");
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
  const bool jpeg = item->info.format == ImageFormat::kJpeg;
  const bool to_jpeg = o.lossless_as_jpeg && !jpeg;  // stored as JPEG, within the bound or not
  if (o.max_side == 0 && !to_jpeg) return Status::OK();
  // The size as shown: EXIF orientations 5-8 swap the sides.
  uint32_t width = item->info.width, height = item->info.height;
  if (jpeg && JpegExifOrientation(item->bytes) >= 5) std::swap(width, height);
  uint32_t target_width = 0, target_height = 0;
  BoundedSize(width, height, o, &target_width, &target_height);
  const bool resize = target_width != width || target_height != height;
  if (!resize && !to_jpeg) return Status::OK();
  const cv::Size target{int(target_width), int(target_height)};
  std::string reencoded;
  try {
    cv::Mat pixels;  // JPEG sources: RGB; others: as stored (grey, BGR or BGRA), 8-bit
    if (jpeg) {
      SHARDPACK_RETURN_IF_ERROR(DecodeJpegFor(item->bytes, o.max_pixels, target, &pixels));
    } else {
      SHARDPACK_RETURN_IF_ERROR(DecodeLossless(item->bytes, o.max_pixels, &pixels));
    }
    if (resize) cv::resize(pixels, pixels, target, 0, 0, cv::INTER_AREA);
    if (jpeg) {
      // A grey JPEG stays grey; its ICC profile (the colour space its values mean) comes along. A
      // CMYK one's does not: it describes CMYK values, and the pixels are RGB now (a reader that
      // applies it fails, as PIL's "cannot build transform", or shows wrong colours).
      const int components = JpegComponents(item->bytes);
      if (components == 1) cv::cvtColor(pixels, pixels, cv::COLOR_RGB2GRAY);
      const std::string profile = components == 4 ? std::string() : JpegIccProfile(item->bytes);
      SHARDPACK_RETURN_IF_ERROR(EncodeJpeg(pixels, o.jpeg_quality, profile, &reencoded));
    } else if (to_jpeg) {
      SHARDPACK_RETURN_IF_ERROR(EncodeJpeg(JpegReady(pixels), o.jpeg_quality, "", &reencoded));
    } else {
      std::vector<uint8_t> encoded;
      SHARDPACK_RETURN_IF_ERROR(OpenCvImEncode(".png", pixels, {}, &encoded));
      reencoded.assign(reinterpret_cast<const char*>(encoded.data()), encoded.size());
    }
    if (resize) SHARDPACK_RETURN_IF_ERROR(ResizeImageFields(target, item));
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("cannot re-encode the image under --max-side: ") + e.what());
  }
  item->cmyk_to_rgb = jpeg && JpegComponents(item->bytes) == 4;
  item->original = item->info;  // its size as shown, as the stored one is
  item->original.width = width, item->original.height = height;
  item->bytes = std::move(reencoded);
  item->bytes_xxh64.reset();
  return ProbeImage(item->bytes, &item->info);
}

}  // namespace shardpack
