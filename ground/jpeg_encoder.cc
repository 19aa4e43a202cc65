#include "ground/jpeg_encoder.h"

// jpeglib.h needs size_t and FILE declared before it.
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
// clang-format off
#include <jpeglib.h>
// clang-format on

namespace shardpack {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void ErrorExit(j_common_ptr cinfo) {
  ErrorManager* e = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

// The libjpeg calls under one setjmp, with plain data only in this frame. false on a libjpeg error.
bool Compress(const cv::Mat& pixels, int quality, std::string_view icc, ErrorManager* error, unsigned char** buffer,
              unsigned long* size) {
  jpeg_compress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));
  cinfo.err = jpeg_std_error(&error->pub);
  error->pub.error_exit = ErrorExit;
  if (setjmp(error->jump)) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, size);
  cinfo.image_width = JDIMENSION(pixels.cols);
  cinfo.image_height = JDIMENSION(pixels.rows);
  cinfo.input_components = pixels.channels();
  cinfo.in_color_space = pixels.channels() == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);  // colour: YCbCr with 2x2 luma sampling, which is 4:2:0
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  if (!icc.empty()) {
    jpeg_write_icc_profile(&cinfo, reinterpret_cast<const JOCTET*>(icc.data()), unsigned(icc.size()));
  }
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels.ptr<uint8_t>(int(cinfo.next_scanline)));
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

}  // namespace

Status EncodeJpeg(const cv::Mat& pixels, int quality, std::string_view icc, std::string* out) {
  if (pixels.depth() != CV_8U || (pixels.channels() != 1 && pixels.channels() != 3) || !pixels.isContinuous()) {
    return Status::InvalidArgument("EncodeJpeg takes continuous 8-bit grey or RGB pixels");
  }
  ErrorManager error;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = Compress(pixels, quality, icc, &error, &buffer, &size);
  if (ok) out->assign(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);  // jpeg_mem_dest's buffer, malloc'ed by libjpeg
  if (!ok) return Status::Corrupt(std::string("cannot encode JPEG: ") + error.message);
  return Status::OK();
}

std::string JpegIccProfile(std::string_view jpeg) {
  static constexpr char kTag[] = "ICC_PROFILE";  // and its NUL: 12 bytes
  const auto* p = reinterpret_cast<const unsigned char*>(jpeg.data());
  const size_t n = jpeg.size();
  std::map<int, std::string_view> chunks;  // by sequence number, from 1
  int count = 0;
  size_t pos = 2;  // after SOI
  while (pos + 4 <= n && p[pos] == 0xFF) {
    const unsigned char marker = p[pos + 1];
    if (marker == 0xDA || marker == 0xD9) break;  // the scan starts: no more headers
    const size_t length = (size_t(p[pos + 2]) << 8) | p[pos + 3];
    if (length < 2 || pos + 2 + length > n) break;
    if (marker == 0xE2 && length >= 2 + 14 && std::memcmp(p + pos + 4, kTag, 12) == 0) {
      const int seq = p[pos + 16], total = p[pos + 17];
      if (seq == 0 || total == 0 || (count != 0 && total != count) || chunks.count(seq)) return "";
      count = total;
      chunks[seq] = jpeg.substr(pos + 18, length - 16);
    }
    pos += 2 + length;
  }
  if (count == 0 || int(chunks.size()) != count) return "";
  std::string profile;
  for (const auto& [seq, data] : chunks) profile.append(data);
  return profile;
}

int JpegComponents(std::string_view jpeg) {
  const auto* p = reinterpret_cast<const unsigned char*>(jpeg.data());
  const size_t n = jpeg.size();
  size_t pos = 2;
  while (pos + 4 <= n && p[pos] == 0xFF) {
    const unsigned char marker = p[pos + 1];
    const size_t length = (size_t(p[pos + 2]) << 8) | p[pos + 3];
    // SOF0-SOF15, less DHT (C4), JPG (C8) and DAC (CC): precision, height, width, components.
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      return pos + 9 < n ? p[pos + 9] : 0;
    }
    if (marker == 0xDA || length < 2) break;
    pos += 2 + length;
  }
  return 0;
}

}  // namespace shardpack
