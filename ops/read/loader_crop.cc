#include "ops/read/loader_crop.h"

#include <algorithm>
#include <cmath>

namespace shardpack {
namespace {

// torchvision's RandomResizedCrop.get_params: 10 tries at a box of the drawn area and aspect
// ratio, then the centre crop of the closest allowed ratio.
cv::Rect2d RandomResizedCropBox(int width, int height, const LoaderOptions& o, std::mt19937_64& rng) {
  const double area = double(width) * height;
  const double log_lo = std::log(o.ratio_min), log_hi = std::log(o.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * Uniform(rng, o.scale_min, o.scale_max);
    const double ratio = std::exp(Uniform(rng, log_lo, log_hi));
    const double w = std::round(std::sqrt(target * ratio)), h = std::round(std::sqrt(target / ratio));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const double x = std::floor(Uniform(rng, 0, width - w + 1)), y = std::floor(Uniform(rng, 0, height - h + 1));
      return {std::min(x, width - w), std::min(y, height - h), w, h};
    }
  }
  const double in_ratio = double(width) / height;
  double w = width, h = height;
  if (in_ratio < o.ratio_min)
    h = std::round(w / o.ratio_min);
  else if (in_ratio > o.ratio_max)
    w = std::round(h * o.ratio_max);
  return {std::floor((width - w) / 2), std::floor((height - h) / 2), w, h};
}

}  // namespace

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * (double(rng() >> 11) * (1.0 / 9007199254740992.0));
}

// Training: torchvision's random-resized-crop box, drawn on the full size, resized to the output.
// Evaluation: resize the shorter side to eval_resize, then the centre crop, mapped onto the full size.
CropPlan LoaderCropPlan(const LoaderOptions& o, std::mt19937_64* rng, cv::Size full) {
  CropPlan plan;
  plan.out = cv::Size(int(o.width), int(o.height));
  if (!o.eval) {
    plan.box = RandomResizedCropBox(full.width, full.height, o, *rng);
    return plan;
  }
  const double scale = double(o.eval_resize) / std::min(full.width, full.height);
  const double rw = full.width * scale, rh = full.height * scale;
  plan.box = cv::Rect2d(std::floor((rw - plan.out.width) / 2) / scale, std::floor((rh - plan.out.height) / 2) / scale,
                        plan.out.width / scale, plan.out.height / scale);
  return plan;
}

CropPlan BucketCropPlan(const Bucket& bucket, bool random, std::mt19937_64* rng, cv::Size full) {
  CropPlan plan;
  plan.out = cv::Size(int(bucket.width), int(bucket.height));
  const double scale = std::max(double(bucket.width) / full.width, double(bucket.height) / full.height);
  const double w = std::min<double>(full.width, bucket.width / scale);
  const double h = std::min<double>(full.height, bucket.height / scale);
  const double x = random ? Uniform(*rng, 0, full.width - w) : (full.width - w) / 2;
  const double y = random ? Uniform(*rng, 0, full.height - h) : (full.height - h) / 2;
  plan.box = cv::Rect2d(x, y, w, h);
  // Evaluation samples the box where it is, to the sub-pixel; training rounds it to whole pixels,
  // which halves the resize's time and moves nothing a random crop would not.
  plan.exact = !random;
  return plan;
}

}  // namespace shardpack
