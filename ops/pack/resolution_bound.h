// pack --max-side: bounding the resolution of a JPEG dataset (wds, lmdb) at pack time, so that every
// epoch decodes at most the bound's pixels (docs/formats/resolution-bound.md).
//
// An image within the bound keeps its bytes. One above it is decoded (a JPEG at the coarsest
// libjpeg-turbo DCT scale, 1/8 to 1, that still has at least the target's pixels), turned upright
// (EXIF orientation), resized by area averaging (OpenCV's INTER_AREA) and re-encoded: JPEG as JPEG at
// the chosen quality (4:2:0, no orientation tag), anything else as PNG. The work runs in the pack
// pipeline's parallel stage and depends on nothing but the image, so output is byte-identical
// whatever the thread count.
#pragma once

#include <cstdint>

#include "formats/common/pack_input.h"
#include "shardpack/pack.h"
#include "shardpack/status.h"

namespace shardpack {

// InvalidArgument for a bound below 16 (0 is no bound), a quality outside 1-100, or a bound with a
// format other than wds and lmdb (raw's --resize already sizes its pixels).
Status CheckResolutionBound(const PackOptions& options);

// The size an image of `width` x `height` (as shown) gets under the bound: the bounded side becomes
// max_side, the other side other x max_side / side rounded to the nearest pixel (halves up), at
// least 1. The size itself when it is within the bound.
void BoundedSize(uint32_t width, uint32_t height, const PackOptions& options, uint32_t* out_width,
                 uint32_t* out_height);

// Applies the bound to item->bytes (after ProbeImage filled item->info): re-encodes the image when
// it exceeds the bound, recording its old info in item->original, and resizes its image fields
// (masks such as "seg.png") to the new size by nearest neighbour; text and JSON fields stay as they
// are. Corrupt, naming what failed, for
// an image that cannot be decoded (the pipeline skips and reports it).
Status BoundResolution(const PackOptions& options, PackItem* item);

}  // namespace shardpack
