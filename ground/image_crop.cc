// DecodeCrop: decode only what a crop needs, then resize the crop (see ground/image_decode_rgb.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "ground/bilinear_resample.h"
#include "ground/image_decode_rgb.h"
#include "ground/jpeg_region_decoder.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

void ResizeBox(const cv::Mat& src, const cv::Rect2d& box, cv::Size out, bool exact, cv::Mat* dst) {
  const bool strong_shrink = box.width >= 2 * out.width && box.height >= 2 * out.height;
  if (exact && !strong_shrink) {
    // Bilinear sampling at the box's exact sub-pixel position, as cv::resize of the whole image
    // would sample it.
    ResampleBilinear(src, box, out, dst);
    return;
  }
  cv::Rect r(int(std::floor(box.x)), int(std::floor(box.y)), std::max(1, int(std::round(box.width))),
             std::max(1, int(std::round(box.height))));
  r &= cv::Rect(0, 0, src.cols, src.rows);
  if (r.size() == out) {
    src(r).copyTo(*dst);
    return;
  }
  cv::resize(src(r), *dst, out, 0, 0, strong_shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
}

}  // namespace

void ResizeCrop(const cv::Mat& src, const CropPlan& plan, cv::Mat* dst) {
  ResizeBox(src, plan.box, plan.out, plan.exact, dst);
}

Status DecodeCrop(std::string_view bytes, uint64_t max_pixels, const CropChooser& choose, bool fast, cv::Mat* dst) {
  ImageInfo info;
  SHARDPACK_RETURN_IF_ERROR(ProbeImage(bytes, &info));
  try {
    if (info.format == ImageFormat::kJpeg && JpegExifOrientation(bytes) == 1) {
      JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
      SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
      const CropPlan plan = choose(decoder.size());
      // A minimum size no box reaches at a reduced scale keeps the decode at full scale.
      const cv::Size min_size = plan.reduced_dct ? plan.out : cv::Size(INT_MAX, INT_MAX);
      cv::Mat region;
      cv::Rect2d box;
      SHARDPACK_RETURN_IF_ERROR(decoder.DecodeRegion(plan.box, min_size, fast, &region, &box));
      ResizeBox(region, box, plan.out, plan.exact, dst);
      return Status::OK();
    }
    cv::Mat rgb;
    cv::Size full;
    SHARDPACK_RETURN_IF_ERROR(DecodeOrientedRgb(bytes, max_pixels, &rgb, &full, fast));
    const CropPlan plan = choose(full);
    ResizeBox(rgb, plan.box, plan.out, plan.exact, dst);
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("OpenCV cannot transform the image: ") + e.what());
  }
  return Status::OK();
}

}  // namespace shardpack
