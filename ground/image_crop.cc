// DecodeCrop: decode only what a crop needs, then resize the crop (see ground/image_decode_rgb.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

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
    if (info.format == ImageFormat::kJpeg) {
      JpegRegionDecoder& decoder = JpegRegionDecoder::ThisThread();
      SHARDPACK_RETURN_IF_ERROR(decoder.ReadHeader(bytes, max_pixels));
      // The crop is chosen on the image as shown; a JPEG stored sideways decodes the box where it
      // lies in the stored image (its rows there, and stopping after the last), then turns the
      // decoded region, not the whole image, upright.
      const int orientation = JpegExifOrientation(bytes);
      const cv::Size stored = decoder.size();
      const CropPlan plan = choose(SizeAsShown(stored, orientation));
      // A minimum size no box reaches at a reduced scale keeps the decode at full scale.
      const cv::Size min_size =
          plan.reduced_dct ? SizeAsShown(plan.out, orientation) : cv::Size(INT_MAX, INT_MAX);  // as stored
      cv::Mat region;
      cv::Rect2d box;
      SHARDPACK_RETURN_IF_ERROR(
          decoder.DecodeRegion(BoxAsStored(plan.box, orientation, stored), min_size, fast, &region, &box));
      if (orientation != 1) {
        // Into this thread's buffer, reused from image to image as the decoder's own is.
        thread_local std::vector<uint8_t> turned_pixels;
        if (turned_pixels.size() < region.total() * 3) turned_pixels.resize(region.total() * 3);
        cv::Mat turned(SizeAsShown(region.size(), orientation), CV_8UC3, turned_pixels.data());
        TurnUpright(orientation, region, &turned);
        box = BoxAsShown(box, orientation, region.size());
        region = turned;
      }
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
