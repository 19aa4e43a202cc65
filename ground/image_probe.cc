// Header parsing for JPEG, PNG, WebP and BMP. Every read is bounds-checked: the input is untrusted.
#include <cstring>

#include "shardpack/image.h"

namespace shardpack {
namespace {

uint32_t Be16(const unsigned char* p) { return (uint32_t(p[0]) << 8) | p[1]; }
uint32_t Be32(const unsigned char* p) { return (Be16(p) << 16) | Be16(p + 2); }
uint32_t Le16(const unsigned char* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 8); }
uint32_t Le24(const unsigned char* p) { return Le16(p) | (uint32_t(p[2]) << 16); }
uint32_t Le32(const unsigned char* p) { return Le16(p) | (Le16(p + 2) << 16); }

bool IsStartOfFrame(unsigned char m) {
  // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
  return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

Status ProbeJpeg(const unsigned char* p, size_t n, ImageInfo* info) {
  size_t pos = 2;  // after SOI
  size_t scan_start = 0;
  while (scan_start == 0) {
    if (pos + 4 > n) return Status::Corrupt("truncated JPEG: header ends before the image data");
    if (p[pos] != 0xFF) return Status::Corrupt("corrupt JPEG: expected a marker in the header");
    while (pos < n && p[pos] == 0xFF) ++pos;  // fill bytes
    if (pos + 3 > n) return Status::Corrupt("truncated JPEG: header ends before the image data");
    unsigned char marker = p[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length field
    if (marker == 0xD9) return Status::Corrupt("corrupt JPEG: end-of-image before any image data");
    uint32_t length = Be16(p + pos);
    if (length < 2 || pos + length > n) {
      return Status::Corrupt("truncated JPEG: a header segment runs past the end of the file");
    }
    if (IsStartOfFrame(marker)) {
      if (length < 7) return Status::Corrupt("corrupt JPEG: start-of-frame segment too short");
      info->height = Be16(p + pos + 3);
      info->width = Be16(p + pos + 5);
    }
    if (marker == 0xDA) scan_start = pos + length;
    pos += length;
  }
  if (info->width == 0 || info->height == 0) {
    return Status::Corrupt("corrupt JPEG: no start-of-frame with non-zero dimensions before the scan");
  }
  // Inside entropy-coded data 0xFF is always followed by 0x00 or a restart marker, so an FF D9 after
  // the first scan can only be the end-of-image marker. Writers may append trailing bytes after it.
  for (size_t i = n - 1; i > scan_start; --i) {
    if (p[i] == 0xD9 && p[i - 1] == 0xFF) return Status::OK();
  }
  return Status::Corrupt("truncated JPEG: no end-of-image marker after the image data");
}

Status ProbePng(const unsigned char* p, size_t n, ImageInfo* info) {
  if (n < 33 || std::memcmp(p + 12, "IHDR", 4) != 0 || Be32(p + 8) != 13) {
    return Status::Corrupt("corrupt PNG: missing or malformed IHDR chunk");
  }
  info->width = Be32(p + 16);
  info->height = Be32(p + 20);
  if (info->width == 0 || info->height == 0 || info->width > 0x7FFFFFFF || info->height > 0x7FFFFFFF) {
    return Status::Corrupt("corrupt PNG: invalid dimensions in IHDR");
  }
  // The IEND chunk (zero length, type IEND, CRC) closes every complete PNG; allow trailing bytes.
  static const unsigned char kIend[8] = {0, 0, 0, 0, 'I', 'E', 'N', 'D'};
  if (n >= 33 + 12) {
    const size_t lowest = n - 12 > 4096 + 33 ? n - 12 - 4096 : 33;
    for (size_t i = n - 12; i >= lowest; --i) {
      if (std::memcmp(p + i, kIend, 8) == 0) return Status::OK();
    }
  }
  return Status::Corrupt("truncated PNG: no IEND chunk at the end of the file");
}

Status ProbeWebp(const unsigned char* p, size_t n, ImageInfo* info) {
  uint64_t riff_end = uint64_t(Le32(p + 4)) + 8;
  if (riff_end > n) return Status::Corrupt("truncated WebP: file shorter than its RIFF header says");
  if (n < 30) return Status::Corrupt("truncated WebP: no image chunk");
  const unsigned char* c = p + 12;
  if (std::memcmp(c, "VP8 ", 4) == 0) {
    if (c[11] != 0x9D || c[12] != 0x01 || c[13] != 0x2A) {
      return Status::Corrupt("corrupt WebP: bad VP8 start code");
    }
    info->width = Le16(c + 14) & 0x3FFF;
    info->height = Le16(c + 16) & 0x3FFF;
  } else if (std::memcmp(c, "VP8L", 4) == 0) {
    if (c[8] != 0x2F) return Status::Corrupt("corrupt WebP: bad VP8L signature");
    uint32_t bits = Le32(c + 9);
    info->width = (bits & 0x3FFF) + 1;
    info->height = ((bits >> 14) & 0x3FFF) + 1;
  } else if (std::memcmp(c, "VP8X", 4) == 0) {
    info->width = Le24(c + 12) + 1;
    info->height = Le24(c + 15) + 1;
  } else {
    return Status::Corrupt("corrupt WebP: unknown first chunk");
  }
  if (info->width == 0 || info->height == 0) return Status::Corrupt("corrupt WebP: zero dimensions");
  return Status::OK();
}

Status ProbeBmp(const unsigned char* p, size_t n, ImageInfo* info) {
  if (n < 26) return Status::Corrupt("truncated BMP: header incomplete");
  uint32_t pixel_offset = Le32(p + 10);
  uint32_t dib_size = Le32(p + 14);
  int64_t width, height;
  uint32_t bpp = 0, compression = 0;
  if (dib_size == 12) {
    width = Le16(p + 18);
    height = Le16(p + 20);
    bpp = Le16(p + 24);
  } else if (dib_size >= 40 && n >= 34) {
    width = static_cast<int32_t>(Le32(p + 18));
    height = static_cast<int32_t>(Le32(p + 22));
    bpp = Le16(p + 28);
    compression = Le32(p + 30);
  } else {
    return Status::Corrupt("corrupt BMP: unknown DIB header size " + std::to_string(dib_size));
  }
  if (height < 0) height = -height;  // negative height means top-down rows
  if (width <= 0 || height <= 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF) {
    return Status::Corrupt("corrupt BMP: invalid dimensions");
  }
  if (bpp == 0 || bpp > 32) return Status::Corrupt("corrupt BMP: invalid bits per pixel");
  uint64_t needed = pixel_offset + 1;
  if (compression == 0 || compression == 3) {  // BI_RGB, BI_BITFIELDS: rows of fixed size
    uint64_t row = (uint64_t(bpp) * uint64_t(width) + 31) / 32 * 4;
    needed = pixel_offset + row * uint64_t(height);
  }
  if (needed > n) return Status::Corrupt("truncated BMP: pixel data shorter than the header says");
  info->width = static_cast<uint32_t>(width);
  info->height = static_cast<uint32_t>(height);
  return Status::OK();
}

}  // namespace

namespace {

// Each known format's file extension (shard members, WebDataset fields) and name (manifests, stat).
struct FormatNames {
  ImageFormat format;
  const char* extension;
  const char* name;
};
constexpr FormatNames kFormatNames[] = {{ImageFormat::kJpeg, "jpg", "jpeg"},
                                        {ImageFormat::kPng, "png", "png"},
                                        {ImageFormat::kWebp, "webp", "webp"},
                                        {ImageFormat::kBmp, "bmp", "bmp"}};

const FormatNames* NamesOf(ImageFormat format) {
  for (const FormatNames& n : kFormatNames) {
    if (n.format == format) return &n;
  }
  return nullptr;
}

}  // namespace

const char* ImageExtension(ImageFormat format) {
  const FormatNames* n = NamesOf(format);
  return n != nullptr ? n->extension : "";
}

const char* ImageFormatName(ImageFormat format) {
  const FormatNames* n = NamesOf(format);
  return n != nullptr ? n->name : "unknown";
}

ImageFormat ImageFormatFromExtension(std::string_view ext) {
  if (ext == "jpeg") return ImageFormat::kJpeg;
  for (const FormatNames& n : kFormatNames) {
    if (ext == n.extension) return n.format;
  }
  return ImageFormat::kUnknown;
}

ImageFormat SniffImageFormat(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) return ImageFormat::kJpeg;
  if (n >= 8 && std::memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) return ImageFormat::kPng;
  if (n >= 12 && std::memcmp(p, "RIFF", 4) == 0 && std::memcmp(p + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  if (n >= 2 && p[0] == 'B' && p[1] == 'M') return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

Status ProbeImage(std::string_view bytes, ImageInfo* info) {
  *info = ImageInfo();
  if (bytes.empty()) return Status::Corrupt("empty file");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  info->format = SniffImageFormat(bytes);
  switch (info->format) {
    case ImageFormat::kJpeg:
      return ProbeJpeg(p, bytes.size(), info);
    case ImageFormat::kPng:
      return ProbePng(p, bytes.size(), info);
    case ImageFormat::kWebp:
      return ProbeWebp(p, bytes.size(), info);
    case ImageFormat::kBmp:
      return ProbeBmp(p, bytes.size(), info);
    case ImageFormat::kUnknown:
      break;
  }
  return Status::Corrupt("not a supported image (JPEG, PNG, WebP, BMP)");
}

}  // namespace shardpack
