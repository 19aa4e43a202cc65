// Decoding to an oriented RGB cv::Mat, shared by the raw-format transform and the loader.
#pragma once

#include <functional>
#include <opencv2/core.hpp>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

// Given the full JPEG size (width, height), the smallest scale the decode must keep. Empty: full.
using MinScale = std::function<double(int width, int height)>;

// Decodes any supported image to RGB with the EXIF orientation applied. A JPEG is decoded at the
// smallest fast DCT scale (1/8, 1/4, 1/2) not below min_scale(w, h). *full_size is the oriented
// size at full resolution. Refuses images over max_pixels before allocating for them. fast: JPEG
// with libjpeg-turbo's fast integer IDCT and plain chroma upsampling (about 7% faster, values off
// by a level or two; fine for augmented training input, not for stored pixels).
Status DecodeOrientedRgb(std::string_view bytes, uint64_t max_pixels, const MinScale& min_scale, cv::Mat* rgb,
                         cv::Size* full_size, bool fast = false);

}  // namespace shardpack
