// Decode + orientation + resize + centre crop, for pre-decoded (raw) datasets: the crop is planned on
// the image's full size and decoded by DecodeCrop (ground/image_crop.cc), which decodes only what the
// crop needs. Also the whole-image decode with EXIF orientation that DecodeCrop falls back on.
#include <algorithm>
#include <cstring>
#include <memory>
#include <opencv2/imgproc.hpp>

#include "ground/codec_util.h"
#include "ground/image_decode_rgb.h"
#include "ground/jpeg_region_decoder.h"
#include "ground/jpeg_segments.h"
#include "ground/opencv_imdecode.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

uint32_t ReadU16(const unsigned char* p, bool big_endian) {
  return big_endian ? (uint32_t(p[0]) << 8) | p[1] : (uint32_t(p[1]) << 8) | p[0];
}
uint32_t ReadU32(const unsigned char* p, bool big_endian) {
  return big_endian ? (ReadU16(p, true) << 16) | ReadU16(p + 2, true)
                    : (ReadU16(p + 2, false) << 16) | ReadU16(p, false);
}

// Orientation from a TIFF block (the payload of an "Exif\0\0" APP1 segment).
int OrientationFromTiff(const unsigned char* t, size_t n) {
  if (n < 8) return 1;
  bool be;
  if (t[0] == 'M' && t[1] == 'M')
    be = true;
  else if (t[0] == 'I' && t[1] == 'I')
    be = false;
  else
    return 1;
  uint32_t ifd = ReadU32(t + 4, be);
  if (ifd > n - 2) return 1;
  uint32_t entries = ReadU16(t + ifd, be);
  for (uint32_t i = 0; i < entries; ++i) {
    uint64_t e = uint64_t(ifd) + 2 + uint64_t(i) * 12;
    if (e + 12 > n) return 1;
    if (ReadU16(t + e, be) == 0x0112) {
      uint32_t v = ReadU16(t + e + 8, be);
      return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
    }
  }
  return 1;
}

// The whole JPEG, decoded by this thread's region decoder.
Status DecodeWholeJpeg(std::string_view bytes, uint64_t max_pixels, bool fast, cv::Mat* rgb, cv::Size* full_size) {
  JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
  SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
  *full_size = decoder.size();
  return decoder.DecodeWhole(fast, rgb);
}

Status DecodeOther(std::string_view bytes, const ImageInfo& info, uint64_t max_pixels, cv::Mat* rgb) {
  if (uint64_t(info.width) * info.height > max_pixels) return TooManyPixels(info.width, info.height, max_pixels);
  SilenceOpenCvLogging();
  // IMREAD_COLOR: grey becomes RGB, alpha is dropped, 16-bit samples become 8-bit.
  cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  cv::Mat bgr;
  SHARDPACK_RETURN_IF_ERROR(OpenCvImDecode(encoded, &bgr));
  if (bgr.empty()) return Status::Corrupt(std::string(ImageFormatName(info.format)) + " data cannot be decoded");
  cv::cvtColor(bgr, *rgb, cv::COLOR_BGR2RGB);
  return Status::OK();
}

}  // namespace

void TurnUpright(int orientation, const cv::Mat& stored, cv::Mat* shown) {
  switch (orientation) {
    case 2:
      cv::flip(stored, *shown, 1);
      break;
    case 3:
      cv::rotate(stored, *shown, cv::ROTATE_180);
      break;
    case 4:
      cv::flip(stored, *shown, 0);
      break;
    case 5:
      cv::transpose(stored, *shown);
      break;
    case 6:
      cv::rotate(stored, *shown, cv::ROTATE_90_CLOCKWISE);
      break;
    case 7:
      cv::transpose(stored, *shown);
      cv::flip(*shown, *shown, -1);
      break;
    case 8:
      cv::rotate(stored, *shown, cv::ROTATE_90_COUNTERCLOCKWISE);
      break;
    default:
      stored.copyTo(*shown);
  }
}

void ApplyOrientation(int orientation, cv::Mat* m) {
  if (orientation < 2 || orientation > 8) return;
  cv::Mat shown;
  TurnUpright(orientation, *m, &shown);
  *m = shown;
}

cv::Size SizeAsShown(cv::Size stored, int orientation) {
  return orientation >= 5 && orientation <= 8 ? cv::Size(stored.height, stored.width) : stored;
}

// A box is continuous (a pixel is a unit square), so a mirror takes x to width - x - w. W, H: the
// stored image's sides. Each case follows ApplyOrientation's turn of the same orientation.
cv::Rect2d BoxAsShown(const cv::Rect2d& b, int orientation, cv::Size stored) {
  const double W = stored.width, H = stored.height;
  switch (orientation) {
    case 2:  // mirrored left to right
      return {W - b.x - b.width, b.y, b.width, b.height};
    case 3:  // half a turn
      return {W - b.x - b.width, H - b.y - b.height, b.width, b.height};
    case 4:  // mirrored top to bottom
      return {b.x, H - b.y - b.height, b.width, b.height};
    case 5:  // transposed: rows become columns
      return {b.y, b.x, b.height, b.width};
    case 6:  // a quarter clockwise: the stored top row becomes the shown right column
      return {H - b.y - b.height, b.x, b.height, b.width};
    case 7:  // transposed, then half a turn
      return {H - b.y - b.height, W - b.x - b.width, b.height, b.width};
    case 8:  // a quarter counter-clockwise: the stored top row becomes the shown left column
      return {b.y, W - b.x - b.width, b.height, b.width};
    default:
      return b;
  }
}

// BoxAsShown undone: the inverse turn (a quarter one way undoes a quarter the other way; every other
// turn undoes itself) applied on the image as shown.
cv::Rect2d BoxAsStored(const cv::Rect2d& b, int orientation, cv::Size stored) {
  const int inverse = orientation == 6 ? 8 : orientation == 8 ? 6 : orientation;
  return BoxAsShown(b, inverse, SizeAsShown(stored, orientation));
}

Status DecodeOrientedRgb(std::string_view bytes, uint64_t max_pixels, cv::Mat* rgb, cv::Size* full_size, bool fast) {
  ImageInfo info;
  SHARDPACK_RETURN_IF_ERROR(ProbeImage(bytes, &info));
  try {
    if (info.format != ImageFormat::kJpeg) {
      SHARDPACK_RETURN_IF_ERROR(DecodeOther(bytes, info, max_pixels, rgb));
      *full_size = rgb->size();
      return Status::OK();
    }
    SHARDPACK_RETURN_IF_ERROR(DecodeWholeJpeg(bytes, max_pixels, fast, rgb, full_size));
    const int orientation = JpegExifOrientation(bytes);
    ApplyOrientation(orientation, rgb);
    *full_size = SizeAsShown(*full_size, orientation);
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("OpenCV cannot decode the image: ") + e.what());
  }
  return Status::OK();
}

int JpegExifOrientation(std::string_view jpeg) {
  int orientation = 1;
  VisitJpegSegments(jpeg, [&orientation](uint8_t marker, std::string_view payload) {
    if (marker != 0xE1 || payload.size() < 6 || payload.substr(0, 6) != std::string_view("Exif\0\0", 6)) return true;
    orientation = OrientationFromTiff(reinterpret_cast<const unsigned char*>(payload.data()) + 6, payload.size() - 6);
    return false;
  });
  return orientation;
}

namespace {

// Where the raw transform's output comes from in the full-size image: the shorter side resized to
// resize_shorter, then the centre crop (the image enlarged first if it is smaller than the crop).
CropPlan TransformPlan(const TransformOptions& o, cv::Size full) {
  const int w = full.width, h = full.height;
  int nw = w, nh = h;
  if (o.resize_shorter > 0) {
    const int s = static_cast<int>(o.resize_shorter);
    nw = w <= h ? s : std::max(1, static_cast<int>((int64_t(w) * s + h / 2) / h));
    nh = w <= h ? std::max(1, static_cast<int>((int64_t(h) * s + w / 2) / w)) : s;
  }
  CropPlan plan;
  plan.reduced_dct = o.scaled_decode;
  plan.exact = true;
  if (o.crop_height == 0 || o.crop_width == 0) {
    plan.box = cv::Rect2d(0, 0, w, h);
    plan.out = cv::Size(nw, nh);
    return plan;
  }
  const int ch = static_cast<int>(o.crop_height), cw = static_cast<int>(o.crop_width);
  if (nw < cw || nh < ch) {
    const double enlarge = std::max(double(ch) / nh, double(cw) / nw);
    nw = std::max(cw, int(nw * enlarge + 0.999));
    nh = std::max(ch, int(nh * enlarge + 0.999));
  }
  const double fx = double(w) / nw, fy = double(h) / nh;
  plan.box = cv::Rect2d((nw - cw) / 2 * fx, (nh - ch) / 2 * fy, cw * fx, ch * fy);
  plan.out = cv::Size(cw, ch);
  return plan;
}

}  // namespace

Status DecodeAndTransform(std::string_view bytes, const TransformOptions& o, DecodedImage* out) {
  CropPlan plan;
  cv::Size full;
  return DecodeAndTransformPlanned(bytes, o, out, &plan, &full);
}

Status DecodeAndTransformPlanned(std::string_view bytes, const TransformOptions& o, DecodedImage* out, CropPlan* plan,
                                 cv::Size* full) {
  // The plan follows from the image's full size, never from a reduced size a scaled JPEG decode
  // produced, so the output size does not depend on the decoder's shortcut.
  struct Chosen {
    const TransformOptions* options;
    CropPlan* plan;
    cv::Size* full;
  } chosen{&o, plan, full};
  cv::Mat result;
  SHARDPACK_RETURN_IF_ERROR(DecodeCrop(
      bytes, o.max_pixels,
      [&chosen](cv::Size size) {
        *chosen.full = size;
        *chosen.plan = TransformPlan(*chosen.options, size);
        return *chosen.plan;
      },
      false, &result));
  out->width = static_cast<uint32_t>(result.cols);
  out->height = static_cast<uint32_t>(result.rows);
  out->rgb.resize(size_t(result.cols) * result.rows * 3);
  for (int y = 0; y < result.rows; ++y) {
    std::memcpy(out->rgb.data() + size_t(y) * result.cols * 3, result.ptr(y), size_t(result.cols) * 3);
  }
  return Status::OK();
}

}  // namespace shardpack
