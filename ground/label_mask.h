// Label masks (segmentation class ids per pixel): decoded as stored, cropped by nearest neighbour
// so that every output pixel is one of the mask's own values, lined up with the image's crop.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <string_view>

#include "ground/image_decode_rgb.h"
#include "shardpack/status.h"

namespace shardpack {

// Decodes a mask that must be an 8-bit, single-channel image (a greyscale PNG, PIL mode "L") of
// exactly `expected` size, its image's oriented size. Corrupt, saying what the mask is instead, for
// anything else: colour masks would need a palette to map colours to ids, which is the dataset's
// business. Refuses masks over max_pixels before allocating for them.
Status DecodeLabelMask(std::string_view bytes, cv::Size expected, uint64_t max_pixels, cv::Mat* mask);

// The mask's plan.box resized to plan.out: each output pixel takes the mask pixel under its centre.
// The box is taken as ResizeCrop takes it (rounded to whole pixels unless plan.exact), so the
// result lines up with the image's crop to within the bilinear filter's half pixel.
void CropLabelMask(const cv::Mat& mask, const CropPlan& plan, cv::Mat* dst);

}  // namespace shardpack
