#include "ground/codec_util.h"

#include <opencv2/core/utils/logger.hpp>
#include <string>

namespace shardpack {

void SilenceOpenCvLogging() {
  static const bool done = [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    return true;
  }();
  (void)done;
}

Status TooManyPixels(uint64_t width, uint64_t height, uint64_t max_pixels) {
  return Status::Corrupt("image of " + std::to_string(width) + "x" + std::to_string(height) +
                         " pixels exceeds the limit of " + std::to_string(max_pixels) + " pixels");
}

}  // namespace shardpack
