// Full decode: libjpeg-turbo (through JpegRegionDecoder) for JPEG, OpenCV for the other formats.
// OpenCV throws; its exceptions stop here and become Status values.
#include <cstring>
#include <memory>
#include <opencv2/imgproc.hpp>

#include "ground/codec_util.h"
#include "ground/jpeg_region_decoder.h"
#include "ground/opencv_imdecode.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

// The same libjpeg decoder the crop decode uses, at full scale; any libjpeg warning (corrupt data)
// is an error, since a damaged JPEG otherwise "decodes" into grey padding silently.
Status DecodeJpeg(std::string_view bytes, uint64_t max_pixels, DecodedImage* out) {
  JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
  SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
  cv::Mat rgb;
  SHARDPACK_RETURN_IF_ERROR(decoder.DecodeWhole(/*fast=*/false, &rgb));
  out->width = static_cast<uint32_t>(rgb.cols);
  out->height = static_cast<uint32_t>(rgb.rows);
  out->rgb.assign(rgb.data, rgb.data + rgb.total() * 3);  // the decoder's buffer is contiguous
  return Status::OK();
}

Status DecodeWithOpenCv(std::string_view bytes, const ImageInfo& info, uint64_t max_pixels, DecodedImage* out) {
  if (uint64_t(info.width) * info.height > max_pixels) return TooManyPixels(info.width, info.height, max_pixels);
  SilenceOpenCvLogging();
  try {
    cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
    cv::Mat bgr;
    SHARDPACK_RETURN_IF_ERROR(OpenCvImDecode(encoded, &bgr));
    if (bgr.empty()) return Status::Corrupt(std::string(ImageFormatName(info.format)) + " data cannot be decoded");
    cv::Mat rgb;
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    out->width = static_cast<uint32_t>(rgb.cols);
    out->height = static_cast<uint32_t>(rgb.rows);
    out->rgb.resize(size_t(rgb.cols) * size_t(rgb.rows) * 3);
    for (int y = 0; y < rgb.rows; ++y) {
      std::memcpy(out->rgb.data() + size_t(y) * rgb.cols * 3, rgb.ptr(y), size_t(rgb.cols) * 3);
    }
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("OpenCV cannot decode the image: ") + e.what());
  }
  return Status::OK();
}

}  // namespace

Status DecodeImage(std::string_view bytes, uint64_t max_pixels, DecodedImage* out) {
  ImageInfo info;
  SHARDPACK_RETURN_IF_ERROR(ProbeImage(bytes, &info));
  if (info.format == ImageFormat::kJpeg) return DecodeJpeg(bytes, max_pixels, out);
  return DecodeWithOpenCv(bytes, info, max_pixels, out);
}

}  // namespace shardpack
