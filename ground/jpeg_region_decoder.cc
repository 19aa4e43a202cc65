#include "ground/jpeg_region_decoder.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "ground/codec_util.h"
#include "ground/coefficient_budget.h"

namespace shardpack {

// libjpeg reports a fatal error by calling error_exit, which must not return: jump back to the
// setjmp of the call in progress. Only plain data lives in the frames between the two.
void JpegRegionDecoder::ErrorExit(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

// Warnings (level -1: corrupt data, premature end) are errors, as TurboJPEG's STOPONWARNING makes
// them elsewhere: a damaged JPEG otherwise "decodes" into grey padding silently. Trace messages
// (level >= 0) are dropped; the library never prints.
void JpegRegionDecoder::EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0) ErrorExit(cinfo);
}

JpegRegionDecoder::JpegRegionDecoder() {
  std::memset(&cinfo_, 0, sizeof(cinfo_));
  cinfo_.err = jpeg_std_error(&error_.pub);
  error_.pub.error_exit = ErrorExit;
  error_.pub.emit_message = EmitMessage;
  error_.message[0] = '\0';
  jpeg_create_decompress(&cinfo_);
}

JpegRegionDecoder::~JpegRegionDecoder() { jpeg_destroy_decompress(&cinfo_); }

JpegRegionDecoder& JpegRegionDecoder::ThisThread() {
  thread_local JpegRegionDecoder decoder;
  return decoder;
}

Status JpegRegionDecoder::ReadHeader(std::string_view jpeg, uint64_t max_pixels) {
  if (header_read_) jpeg_abort_decompress(&cinfo_);
  header_read_ = false;
  if (setjmp(error_.jump)) {
    jpeg_abort_decompress(&cinfo_);
    return Status::Corrupt(std::string("JPEG header: ") + error_.message);
  }
  jpeg_mem_src(&cinfo_, reinterpret_cast<const unsigned char*>(jpeg.data()), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&cinfo_, TRUE);
  header_read_ = true;
  if (uint64_t(cinfo_.image_width) * cinfo_.image_height > max_pixels) {
    return TooManyPixels(cinfo_.image_width, cinfo_.image_height, max_pixels);
  }
  return Status::OK();
}

uint64_t JpegRegionDecoder::CoefficientBytes() const {
  if (!header_read_ || !cinfo_.progressive_mode) return 0;
  uint64_t total = 0;  // libjpeg's whole-image coefficient arrays (jdcoefct.c), one per component
  for (int c = 0; c < cinfo_.num_components; ++c) {
    const jpeg_component_info& component = cinfo_.comp_info[c];
    total += uint64_t(component.width_in_blocks) * component.height_in_blocks * DCTSIZE2 * sizeof(JCOEF);
  }
  return total;
}

bool JpegRegionDecoder::DecodeRows(unsigned scale_num, bool fast, int x0, int x1, int y0, int y1, Decoded* decoded) {
  if (setjmp(error_.jump)) {
    jpeg_abort_decompress(&cinfo_);
    header_read_ = false;
    return false;
  }
  const bool cmyk = cinfo_.jpeg_color_space == JCS_CMYK || cinfo_.jpeg_color_space == JCS_YCCK;
  cinfo_.scale_num = scale_num;
  cinfo_.scale_denom = 8;
  cinfo_.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  cinfo_.dct_method = fast ? JDCT_IFAST : JDCT_ISLOW;
  cinfo_.do_fancy_upsampling = fast ? FALSE : TRUE;
  jpeg_start_decompress(&cinfo_);
  JDIMENSION xoffset = JDIMENSION(x0), width = JDIMENSION(x1 - x0);
  // Widens the columns to whole iMCUs; cinfo_.output_width becomes `width`.
  if (width < cinfo_.output_width) jpeg_crop_scanline(&cinfo_, &xoffset, &width);
  // Skip whole iMCU rows only: libjpeg-turbo has had bugs skipping from mid row group with merged
  // upsampling (its issue #915), and the few rows read in excess cost next to nothing.
  const int rows_per_imcu = cinfo_.max_v_samp_factor * cinfo_.min_DCT_scaled_size;
  const JDIMENSION skip = JDIMENSION(y0 / rows_per_imcu * rows_per_imcu);
  if (skip > 0) jpeg_skip_scanlines(&cinfo_, skip);
  const size_t channels = size_t(cinfo_.output_components);
  const size_t stride = size_t(width) * channels;
  const size_t rows = size_t(y1) - skip;
  std::vector<uint8_t>& out = cmyk ? cmyk_ : buffer_;
  if (out.size() < rows * stride) out.resize(rows * stride);
  if (rows_.size() < rows) rows_.resize(rows);
  for (size_t r = 0; r < rows; ++r) rows_[r] = out.data() + r * stride;
  while (cinfo_.output_scanline < JDIMENSION(y1)) {
    jpeg_read_scanlines(&cinfo_, &rows_[cinfo_.output_scanline - skip], JDIMENSION(y1) - cinfo_.output_scanline);
  }
  // Stopping early is the point: the rows below the region are never entropy-decoded.
  jpeg_abort_decompress(&cinfo_);
  header_read_ = false;
  decoded->x = int(xoffset);
  decoded->y = int(skip);
  decoded->width = int(width);
  decoded->rows = int(rows);
  return true;
}

Status JpegRegionDecoder::DecodeRegion(const cv::Rect2d& box, cv::Size min_size, bool fast, cv::Mat* pixels,
                                       cv::Rect2d* box_in_pixels) {
  if (!header_read_) return Status::InvalidArgument("JpegRegionDecoder::DecodeRegion called without a header");
  const int w = int(cinfo_.image_width), h = int(cinfo_.image_height);
  // The coarsest of the fast reduced IDCTs (1/8, 1/4, 1/2) that keeps the box at least min_size.
  unsigned num = 8;
  for (unsigned n : {1u, 2u, 4u}) {
    if (box.width * n / 8 >= min_size.width && box.height * n / 8 >= min_size.height) {
      num = n;
      break;
    }
  }
  const double s = num / 8.0;
  const int ow = int((int64_t(w) * num + 7) / 8), oh = int((int64_t(h) * num + 7) / 8);  // libjpeg's rounding up
  // Two pixels of margin: the first and last column of a cropped region differ from a whole decode
  // (chroma upsampling replicates the region's edge instead of reading its neighbour), and a bilinear
  // resize may read one pixel beyond the box. Inside the margin, the pixels equal a whole decode's.
  const int x0 = std::clamp(int(std::floor(box.x * s)) - 2, 0, ow - 1);
  const int y0 = std::clamp(int(std::floor(box.y * s)) - 2, 0, oh - 1);
  const int x1 = std::clamp(int(std::ceil((box.x + box.width) * s)) + 2, x0 + 1, ow);
  const int y1 = std::clamp(int(std::ceil((box.y + box.height) * s)) + 2, y0 + 1, oh);
  const bool cmyk = cinfo_.jpeg_color_space == JCS_CMYK || cinfo_.jpeg_color_space == JCS_YCCK;
  Decoded d;
  // Held in this frame, outside DecodeRows' setjmp: a longjmp would skip its release.
  const CoefficientBudget::Lease coefficients = CoefficientBudget::Process().Acquire(CoefficientBytes());
  if (!DecodeRows(num, fast, x0, x1, y0, y1, &d)) return Status::Corrupt(std::string("JPEG data: ") + error_.message);
  if (cmyk) {
    // libjpeg hands out Adobe's inverted CMYK: each channel is already 255 - ink, so RGB = C*K/255.
    const size_t n = size_t(d.width) * d.rows;
    if (buffer_.size() < n * 3) buffer_.resize(n * 3);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* in = cmyk_.data() + i * 4;
      for (int c = 0; c < 3; ++c) buffer_[i * 3 + c] = static_cast<uint8_t>((in[c] * in[3] + 127) / 255);
    }
  }
  *pixels = cv::Mat(d.rows, d.width, CV_8UC3, buffer_.data());
  *box_in_pixels = cv::Rect2d(box.x * s - d.x, box.y * s - d.y, box.width * s, box.height * s);
  return Status::OK();
}

Status JpegRegionDecoder::DecodeWhole(bool fast, cv::Mat* pixels) {
  const cv::Size full = size();
  cv::Rect2d box;
  // A minimum size no reduced scale reaches: full scale.
  return DecodeRegion(cv::Rect2d(0, 0, full.width, full.height), cv::Size(INT_MAX, INT_MAX), fast, pixels, &box);
}

}  // namespace shardpack
