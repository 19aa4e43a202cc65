// Decoding only the part of a JPEG that a crop needs.
//
// A training crop (random-resized-crop) or an evaluation centre crop uses part of the image, and
// libjpeg-turbo can skip work outside it: rows above the crop skip the inverse DCT and colour
// conversion (jpeg_skip_scanlines), columns beside it skip them too (jpeg_crop_scanline), and rows
// below it are not even entropy-decoded, because decoding stops after the crop's last row. When the
// crop is shrunk a lot, decoding at a reduced DCT scale (1/2, 1/4, 1/8) saves most of the rest.
//
// This uses the libjpeg API rather than TurboJPEG, whose 2.1 version (Debian 12) has no cropping.
#pragma once

// jpeglib.h needs size_t and FILE declared before it.
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on
#include <opencv2/core.hpp>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

class JpegRegionDecoder {
 public:
  JpegRegionDecoder();
  ~JpegRegionDecoder();
  JpegRegionDecoder(const JpegRegionDecoder&) = delete;
  JpegRegionDecoder& operator=(const JpegRegionDecoder&) = delete;

  // This thread's decoder (its libjpeg state and pixel buffer are reused from image to image).
  static JpegRegionDecoder& ThisThread();

  // Reads the header of `jpeg`, which must stay alive until DecodeRegion returns. Refuses an image
  // declaring more than max_pixels pixels, before any allocation for its pixels.
  Status ReadHeader(std::string_view jpeg, uint64_t max_pixels);
  // The stored size (before any EXIF orientation), valid after ReadHeader.
  cv::Size size() const { return cv::Size(int(cinfo_.image_width), int(cinfo_.image_height)); }

  // Decodes at least `box` (in stored full-size pixels) to RGB, at the coarsest DCT scale at which
  // the box still measures at least min_size pixels. *pixels points into this decoder's buffer and
  // stays valid until its next call; *box_in_pixels is `box` in the coordinates of *pixels. fast:
  // fast integer IDCT and plain chroma upsampling (values off by a level or two).
  Status DecodeRegion(const cv::Rect2d& box, cv::Size min_size, bool fast, cv::Mat* pixels, cv::Rect2d* box_in_pixels);
  // The whole image at full scale, after ReadHeader; *pixels as for DecodeRegion.
  Status DecodeWhole(bool fast, cv::Mat* pixels);
  // The bytes of DCT coefficients a decode of the image read by ReadHeader holds at once: the whole
  // image's for a progressive JPEG (taken from CoefficientBudget::Process() while it decodes), 0
  // for a baseline one, which decodes a few rows at a time.
  uint64_t CoefficientBytes() const;

 private:
  struct ErrorManager {
    jpeg_error_mgr pub;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
  };
  static void ErrorExit(j_common_ptr cinfo);
  static void EmitMessage(j_common_ptr cinfo, int level);

  // Where the decoded region lies in the image scaled by scale_num/8, and its size.
  struct Decoded {
    int x = 0, y = 0, width = 0, rows = 0;
  };
  // The libjpeg calls of DecodeRegion, under one setjmp: plain data only in this frame. Decodes
  // at least columns [x0, x1) and rows [y0, y1) of the scaled image; false on a libjpeg error,
  // whose text is in error_.message.
  bool DecodeRows(unsigned scale_num, bool fast, int x0, int x1, int y0, int y1, Decoded* decoded);

  jpeg_decompress_struct cinfo_;
  ErrorManager error_;
  std::vector<uint8_t> buffer_;  // the decoded region, reused
  std::vector<uint8_t> cmyk_;    // CMYK images only: the region before conversion to RGB
  std::vector<JSAMPROW> rows_;
  bool header_read_ = false;
};

}  // namespace shardpack
