// Small pieces the decoders share: OpenCV's logging silenced (the library never prints), and the
// message for images over the pixel limit.
#pragma once

#include <cstdint>

#include "shardpack/status.h"

namespace shardpack {

// Idempotent and thread-safe.
void SilenceOpenCvLogging();

// Corrupt: "image of WxH pixels exceeds the limit of N pixels".
Status TooManyPixels(uint64_t width, uint64_t height, uint64_t max_pixels);

}  // namespace shardpack
