#include "ground/opencv_imdecode.h"

#include <dlfcn.h>
#include <webp/decode.h>

#include <cstring>
#include <mutex>
#include <opencv2/imgcodecs.hpp>  // the declaration of cv::imdecode (and IMREAD_COLOR) only

namespace shardpack {
namespace {

using ImDecodeFunction = cv::Mat (*)(cv::InputArray, int);
using ImEncodeFunction = bool (*)(const cv::String&, cv::InputArray, std::vector<uchar>&, const std::vector<int>&);

struct Codecs {
  ImDecodeFunction imdecode = nullptr;
  ImEncodeFunction imencode = nullptr;
  std::string error;
};

// Loads the library the build found (SHARDPACK_OPENCV_IMGCODECS, its soname) once per process. It
// stays loaded: decoded images may still point into nothing of it, but unloading gains nothing.
const Codecs& LoadCodecs() {
  static const Codecs codecs = [] {
    Codecs c;
    void* library = ::dlopen(SHARDPACK_OPENCV_IMGCODECS, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = ::dlerror();
      c.error = std::string("cannot load OpenCV's image codecs (") + SHARDPACK_OPENCV_IMGCODECS +
                "), which decode images other than JPEG: " + (why ? why : "unknown error") +
                "; install libopencv-imgcodecs (scripts/install-deps.sh)";
      return c;
    }
    // The mangled name of cv::imdecode(cv::InputArray, int), stable across OpenCV 3 and 4.
    c.imdecode = reinterpret_cast<ImDecodeFunction>(::dlsym(library, "_ZN2cv8imdecodeERKNS_11_InputArrayEi"));
    if (c.imdecode == nullptr) c.error = std::string(SHARDPACK_OPENCV_IMGCODECS) + " has no cv::imdecode";
    // cv::imencode(const String&, InputArray, std::vector<uchar>&, const std::vector<int>&), OpenCV 4.
    c.imencode = reinterpret_cast<ImEncodeFunction>(::dlsym(library,
                                                            "_ZN2cv8imencodeERKNSt7__cxx1112basic_stringIcSt11char_"
                                                            "traitsIcESaIcEEERKNS_11_InputArrayERSt6vectorIhSaIhEERKSB_"
                                                            "IiSaIiEE"));
    if (c.imencode == nullptr && c.error.empty())
      c.error = std::string(SHARDPACK_OPENCV_IMGCODECS) + " has no cv::imencode";
    return c;
  }();
  return codecs;
}

// OpenCV gives the bytes to the first of its decoders whose signature check accepts them, whatever
// format the caller has in mind: JPEG, PNG and BMP are checked before any other, by their first
// bytes, but a file that looks like WebP to us and not to libwebp falls through to the rest, and
// one with "DICM" at byte 128 reaches GDCM's DICOM reader, which aborts the process on an assert
// (found by fuzz_image). So only the four formats shardpack reads are handed over, a WebP only when
// libwebp reads its header as OpenCV's own check does (WebPGetFeatures on the first 32 bytes).
Status CheckDecodableHere(const cv::Mat& encoded) {
  const auto* p = encoded.data;
  const size_t n = encoded.total() * encoded.elemSize();
  const auto starts = [&](const char* magic, size_t at, size_t len) {
    return n >= at + len && std::memcmp(p + at, magic, len) == 0;
  };
  if (starts("\xFF\xD8\xFF", 0, 3) || starts("\x89PNG\r\n\x1A\n", 0, 8) || starts("BM", 0, 2)) return Status::OK();
  if (starts("RIFF", 0, 4) && starts("WEBP", 8, 4)) {
    constexpr size_t kWebPHeader = 32;  // OpenCV's WEBP_HEADER_SIZE
    WebPBitstreamFeatures features;
    if (n >= kWebPHeader && WebPGetFeatures(p, kWebPHeader, &features) == VP8_STATUS_OK) return Status::OK();
    return Status::Corrupt("WebP header cannot be read (libwebp refuses it)");
  }
  return Status::Corrupt("not a JPEG, PNG, WebP or BMP image");
}

Status ImDecode(const cv::Mat& encoded, int flags, cv::Mat* out) {
  const Codecs& codecs = LoadCodecs();
  if (codecs.imdecode == nullptr) return Status::Unsupported(codecs.error);
  SHARDPACK_RETURN_IF_ERROR(CheckDecodableHere(encoded));
  // The declaration's own type, so that a change of signature fails to compile here.
  static_assert(
      std::is_same_v<decltype(static_cast<cv::Mat (*)(cv::InputArray, int)>(&cv::imdecode)), ImDecodeFunction>);
  *out = codecs.imdecode(encoded, flags);
  return Status::OK();
}

}  // namespace

Status OpenCvImDecode(const cv::Mat& encoded, cv::Mat* bgr) { return ImDecode(encoded, cv::IMREAD_COLOR, bgr); }

Status OpenCvImDecodeAsStored(const cv::Mat& encoded, cv::Mat* image) {
  return ImDecode(encoded, cv::IMREAD_UNCHANGED, image);
}

Status OpenCvImEncode(const std::string& extension, const cv::Mat& bgr, const std::vector<int>& params,
                      std::vector<uint8_t>* encoded) {
  const Codecs& codecs = LoadCodecs();
  if (codecs.imencode == nullptr) return Status::Unsupported(codecs.error);
  static_assert(std::is_same_v<decltype(static_cast<bool (*)(const cv::String&, cv::InputArray, std::vector<uchar>&,
                                                             const std::vector<int>&)>(&cv::imencode)),
                               ImEncodeFunction>);
  if (!codecs.imencode(extension, bgr, *encoded, params)) {
    return Status::Corrupt("OpenCV cannot encode the image as " + extension);
  }
  return Status::OK();
}

}  // namespace shardpack
