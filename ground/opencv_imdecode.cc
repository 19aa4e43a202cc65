#include "ground/opencv_imdecode.h"

#include <dlfcn.h>

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

Status ImDecode(const cv::Mat& encoded, int flags, cv::Mat* out) {
  const Codecs& codecs = LoadCodecs();
  if (codecs.imdecode == nullptr) return Status::Unsupported(codecs.error);
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
