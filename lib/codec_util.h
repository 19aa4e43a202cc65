// Small pieces the decoders share: one TurboJPEG decompressor per thread (creating one per image
// costs an allocation of its state each time), OpenCV's logging silenced (the library never prints),
// and the message for images over the pixel limit.
#pragma once

#include <turbojpeg.h>

#include <cstdint>

#include "shardpack/status.h"

namespace shardpack {

// This thread's decompressor, created on first use and destroyed when the thread ends; nullptr if
// libjpeg-turbo cannot allocate one.
tjhandle ThreadJpegDecompressor();

// Idempotent and thread-safe.
void SilenceOpenCvLogging();

// Corrupt: "image of WxH pixels exceeds the limit of N pixels".
Status TooManyPixels(uint64_t width, uint64_t height, uint64_t max_pixels);

}  // namespace shardpack
