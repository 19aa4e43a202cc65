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

#include "ground/jpeg_segments.h"

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
  static constexpr std::string_view kTag("ICC_PROFILE\0", 12);
  std::map<int, std::string_view> chunks;  // by sequence number, from 1
  int count = 0;
  bool consistent = true;
  VisitJpegSegments(jpeg, [&](uint8_t marker, std::string_view payload) {
    if (marker != 0xE2 || payload.size() < 14 || payload.substr(0, 12) != kTag) return true;
    const int seq = uint8_t(payload[12]), total = uint8_t(payload[13]);
    consistent = seq != 0 && total != 0 && (count == 0 || total == count) && chunks.count(seq) == 0;
    count = total;
    chunks[seq] = payload.substr(14);
    return consistent;
  });
  if (!consistent || count == 0 || int(chunks.size()) != count) return "";
  std::string profile;
  for (const auto& [seq, data] : chunks) profile.append(data);
  return profile;
}

int JpegComponents(std::string_view jpeg) {
  int components = 0;
  VisitJpegSegments(jpeg, [&components](uint8_t marker, std::string_view payload) {
    // SOF0-SOF15, less DHT (C4), JPG (C8) and DAC (CC): precision, height, width, components.
    const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame && payload.size() >= 6) components = uint8_t(payload[5]);
    return !frame;
  });
  return components;
}

}  // namespace shardpack
