// Image formats, header probing and decoding.
//
// Images are recognised by their content (magic bytes), never by file name. Probing reads only the
// header and the last few bytes, so it costs next to nothing next to reading the file; decoding is
// the expensive, thorough check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kBmp };

// The extension a sample member gets: "jpg", "png", "webp", "bmp" ("" for kUnknown).
const char* ImageExtension(ImageFormat format);
// The format's name as written in manifests and reports: "jpeg", "png", "webp", "bmp".
const char* ImageFormatName(ImageFormat format);
// Inverse of ImageExtension, also accepting "jpeg"; kUnknown for anything else.
ImageFormat ImageFormatFromExtension(std::string_view ext);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  uint32_t width = 0;
  uint32_t height = 0;
};

// Identifies the format from the first bytes; kUnknown when no supported magic matches.
ImageFormat SniffImageFormat(std::string_view bytes);

// Reads format and dimensions from the header and checks the file is complete (JPEG end-of-image
// marker, PNG IEND chunk, WebP RIFF size, BMP pixel array). Returns Corrupt with a reason a user can
// act on: "empty file", "not a supported image (JPEG, PNG, WebP, BMP)", "truncated JPEG: ...".
Status ProbeImage(std::string_view bytes, ImageInfo* info);

struct DecodedImage {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb;  // height * width * 3 bytes, row-major, RGB
};

// Decodes the whole image to 8-bit RGB. JPEG goes through libjpeg-turbo and fails on any libjpeg
// warning (premature end, corrupt data); other formats through OpenCV. Refuses images whose header
// declares more than max_pixels pixels before allocating for them.
Status DecodeImage(std::string_view bytes, uint64_t max_pixels, DecodedImage* out);

// What `pack --format raw` does to each image: decode, convert to RGB (grey, CMYK and alpha
// handled), apply the EXIF orientation, resize the shorter side, centre-crop.
struct TransformOptions {
  uint32_t resize_shorter = 0;  // shorter side after resizing; 0: no resize
  uint32_t crop_height = 0;     // centre crop; 0: no crop (both or neither are set)
  uint32_t crop_width = 0;
  uint64_t max_pixels = 178'956'970;
  // JPEG only: decode at the smallest libjpeg-turbo DCT scale (M/8) whose result still covers the
  // resize target, which skips most of the IDCT work for large images.
  bool scaled_decode = true;
};

// Decodes and transforms one image into `out` (its buffer is reused). The result is exactly
// crop_height x crop_width when a crop is set. Corrupt with a reason on bad input; refuses images
// declaring more than max_pixels pixels before allocating for them.
Status DecodeAndTransform(std::string_view bytes, const TransformOptions& options, DecodedImage* out);

// The EXIF orientation (1..8) of a JPEG, 1 when it has none or it cannot be read.
int JpegExifOrientation(std::string_view jpeg);

}  // namespace shardpack
