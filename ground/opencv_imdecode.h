// cv::imdecode(encoded, flags) and cv::imencode, with OpenCV's image codecs loaded on first use.
//
// Why not link libopencv_imgcodecs: Debian's build of it depends on about 130 libraries (GDAL,
// poppler, HDF5, x265, ...), whose loading and initialisation took 0.13 s of every process start
// (0.15 s in all) on the development machine: every `shardpack` command, every part of a
// partitioned pack, every Python import. JPEGs, nearly every image, are decoded by libjpeg-turbo;
// only other formats (PNG, BMP, WebP, TIFF) need OpenCV's codecs, so the library is dlopen'ed the
// first time one of them comes.
#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

// *bgr: the image as 8-bit BGR (empty when the bytes cannot be decoded). Unsupported, naming the
// library, when it cannot be loaded. May throw cv::Exception, as cv::imdecode does. Thread-safe.
Status OpenCvImDecode(const cv::Mat& encoded, cv::Mat* bgr);
// *image: the image with its stored depth and channels (IMREAD_UNCHANGED), e.g. one 8-bit channel
// for a greyscale PNG. Otherwise as OpenCvImDecode.
Status OpenCvImDecodeAsStored(const cv::Mat& encoded, cv::Mat* image);
// cv::imencode(extension, bgr, *encoded, params), from the same library loaded the same way.
// Corrupt when OpenCV cannot encode the image.
Status OpenCvImEncode(const std::string& extension, const cv::Mat& bgr, const std::vector<int>& params,
                      std::vector<uint8_t>* encoded);

}  // namespace shardpack
