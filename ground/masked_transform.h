// The raw pack's transform of an image together with its label masks, so that each stored mask
// lines up with its stored pixels. No OpenCV types here: formats include it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardpack/image.h"
#include "shardpack/status.h"

namespace shardpack {

// Transforms the image `bytes` as DecodeAndTransform does into *out, and cuts each of `masks`
// (encoded label masks, ground/label_mask.h's rules: one 8-bit channel of the image's oriented size)
// by the same plan, by nearest neighbour, into (*mask_pixels)[i]: out->width x out->height bytes,
// row-major. On a bad mask: Corrupt saying what it is, with *bad_mask its position in `masks`;
// otherwise *bad_mask is masks.size().
Status DecodeAndTransformWithMasks(std::string_view bytes, const TransformOptions& options,
                                   const std::vector<std::string_view>& masks, DecodedImage* out,
                                   std::vector<std::string>* mask_pixels, size_t* bad_mask);

}  // namespace shardpack
