// Walking a JPEG's header segments (APPn, SOFn, DQT, ...), up to the start of the image data: the one
// loop behind reading its EXIF orientation, its ICC profile and its component count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shardpack {

// Calls visit(marker, payload) for each header segment after SOI, in order, where payload is the
// segment's bytes after its 2-byte length; stops at the start of scan (SOS) or EOI, at a segment
// that does not fit in `jpeg`, or when visit returns false.
template <typename Visit>
void VisitJpegSegments(std::string_view jpeg, Visit visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(jpeg.data());
  const size_t n = jpeg.size();
  size_t pos = 2;  // after SOI
  while (pos + 4 <= n && p[pos] == 0xFF) {
    const uint8_t marker = p[pos + 1];
    if (marker == 0xDA || marker == 0xD9) return;  // image data: no more header segments
    const size_t length = (size_t(p[pos + 2]) << 8) | p[pos + 3];
    if (length < 2 || pos + 2 + length > n) return;
    if (!visit(marker, jpeg.substr(pos + 4, length - 2))) return;
    pos += 2 + length;
  }
}

}  // namespace shardpack
