#include "ground/label_mask.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ground/masked_transform.h"
#include "ground/opencv_imdecode.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

std::string SizeText(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

// Source index under the centre of each of `out` output pixels, for a box [origin, origin + extent)
// on an axis of `limit` pixels.
void CentreIndices(double origin, double extent, int out, int limit, std::vector<int>* index) {
  index->resize(size_t(out));
  const double step = extent / out;
  for (int i = 0; i < out; ++i) {
    const int source = int(std::floor(origin + (i + 0.5) * step));
    (*index)[size_t(i)] = std::clamp(source, 0, limit - 1);
  }
}

}  // namespace

Status DecodeLabelMask(std::string_view bytes, cv::Size expected, uint64_t max_pixels, cv::Mat* mask) {
  ImageInfo info;
  const Status probe = ProbeImage(bytes, &info);
  if (!probe.ok()) return Status::Corrupt("mask is not a readable image: " + probe.message());
  if (uint64_t(info.width) * info.height > max_pixels) {
    return Status::Corrupt("mask has " + SizeText(int(info.width), int(info.height)) + " pixels, over the limit of " +
                           std::to_string(max_pixels));
  }
  if (int(info.width) != expected.width || int(info.height) != expected.height) {
    return Status::Corrupt("mask is " + SizeText(int(info.width), int(info.height)) + " pixels, its image " +
                           SizeText(expected.width, expected.height) + "; a mask must have its image's size");
  }
  const cv::Mat encoded(1, int(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  try {
    SHARDPACK_RETURN_IF_ERROR(OpenCvImDecodeAsStored(encoded, mask));
  } catch (const cv::Exception& e) {
    return Status::Corrupt(std::string("OpenCV cannot decode the mask: ") + e.what());
  }
  if (mask->empty()) return Status::Corrupt("OpenCV cannot decode the mask");
  if (mask->type() != CV_8UC1) {
    return Status::Corrupt("mask has " + std::to_string(mask->channels()) + " channel(s) of " +
                           std::to_string(mask->elemSize1() * 8) +
                           " bits; a mask must be one 8-bit channel of class ids (a greyscale PNG, PIL mode L)");
  }
  return Status::OK();
}

void CropLabelMask(const cv::Mat& mask, const CropPlan& plan, cv::Mat* dst) {
  cv::Rect2d box = plan.box;
  if (!plan.exact) {  // as ResizeCrop rounds a training crop
    box = cv::Rect2d(std::floor(box.x), std::floor(box.y), std::max(1.0, std::round(box.width)),
                     std::max(1.0, std::round(box.height)));
  }
  thread_local std::vector<int> xs, ys;
  CentreIndices(box.x, box.width, plan.out.width, mask.cols, &xs);
  CentreIndices(box.y, box.height, plan.out.height, mask.rows, &ys);
  dst->create(plan.out, CV_8UC1);
  for (int y = 0; y < plan.out.height; ++y) {
    const uint8_t* in = mask.ptr<uint8_t>(ys[size_t(y)]);
    uint8_t* out = dst->ptr<uint8_t>(y);
    for (int x = 0; x < plan.out.width; ++x) out[x] = in[xs[size_t(x)]];
  }
}

Status DecodeAndTransformWithMasks(std::string_view bytes, const TransformOptions& options,
                                   const std::vector<std::string_view>& masks, DecodedImage* out,
                                   std::vector<std::string>* mask_pixels, size_t* bad_mask) {
  *bad_mask = masks.size();  // none: the image itself
  CropPlan plan;
  cv::Size full;
  SHARDPACK_RETURN_IF_ERROR(DecodeAndTransformPlanned(bytes, options, out, &plan, &full));
  mask_pixels->resize(masks.size());
  thread_local cv::Mat mask, cut;
  for (size_t i = 0; i < masks.size(); ++i) {
    *bad_mask = i;
    SHARDPACK_RETURN_IF_ERROR(DecodeLabelMask(masks[i], full, options.max_pixels, &mask));
    CropLabelMask(mask, plan, &cut);
    std::string& pixels = (*mask_pixels)[i];
    pixels.resize(size_t(cut.rows) * cut.cols);
    for (int y = 0; y < cut.rows; ++y) std::memcpy(pixels.data() + size_t(y) * cut.cols, cut.ptr(y), cut.cols);
  }
  *bad_mask = masks.size();
  return Status::OK();
}

}  // namespace shardpack
