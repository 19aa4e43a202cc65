// Real encoded images for tests, benchmarks and the demo: JPEG through libjpeg-turbo, PNG, WebP and
// BMP through OpenCV. Pixels are a deterministic function of (width, height, seed): smooth colour
// gradients plus noise, so JPEG sizes resemble photographs (about 0.5-0.7 bytes per pixel at the
// default noise).
#pragma once

#include <cstdint>
#include <string>

#include "shardpack/image.h"

namespace shardpack::testing {

// Row-major RGB pixels.
std::string MakePixels(int width, int height, uint64_t seed, int noise = 24);
std::string EncodeJpeg(const std::string& rgb, int width, int height, int quality = 90);
// PNG, WebP (lossless) or BMP through OpenCV.
std::string EncodeWithOpenCv(const std::string& rgb, int width, int height, ImageFormat format);
// A single-channel 8-bit PNG (a label mask) of row-major grey values, through OpenCV.
std::string EncodeGreyPng(const std::string& grey, int width, int height);
// `jpeg` with an EXIF APP1 segment giving its orientation (1..8; 6: rotate 90 degrees clockwise to
// show it), as cameras write it.
std::string WithExifOrientation(const std::string& jpeg, uint16_t orientation);
// Convenience: pixels from MakePixels encoded as `format`.
std::string MakeImage(ImageFormat format, int width, int height, uint64_t seed);

}  // namespace shardpack::testing
