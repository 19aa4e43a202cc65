// Encoding pixels as JPEG with libjpeg-turbo, and the ICC profile a JPEG carries: what pack
// --max-side needs to re-encode an image without losing its colour space.
#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

// Encodes `pixels` (CV_8UC3 RGB, or CV_8UC1 grey) as a baseline JPEG at `quality` (1-100), colour with
// 4:2:0 chroma, with `icc` (an ICC profile, empty for none) in APP2 markers, into *out. The output
// depends only on the arguments.
Status EncodeJpeg(const cv::Mat& pixels, int quality, std::string_view icc, std::string* out);

// The ICC profile in a JPEG's APP2 "ICC_PROFILE" markers, its chunks joined in sequence order; empty
// when there is none or its chunks are inconsistent.
std::string JpegIccProfile(std::string_view jpeg);

// The number of colour components in a JPEG's frame header (1 grey, 3 YCbCr or RGB, 4 CMYK); 0 when
// no frame header is found.
int JpegComponents(std::string_view jpeg);

}  // namespace shardpack
