// Bilinear resampling of a sub-pixel box, the resize that stored (raw) pixels get.
//
// cv::resize can only start a box at a whole pixel, and cv::warpAffine, which can start anywhere,
// interpolates each output pixel from four neighbours through a generic remap (twice the time of
// this). A resize is separable: each output row blends two source rows with one weight (a pass that
// vectorises), then each output pixel blends two columns of that row.
#pragma once

#include <opencv2/core.hpp>

namespace shardpack {

// Resizes the part `box` of `src` (8-bit, any number of channels) to `out`: output pixel (i, j)
// samples `src` at (box.x + (j + 0.5) * box.width / out.width - 0.5, likewise for rows), as
// cv::resize of the whole image would, with edges replicated. Weights have 8 bits (1/256 pixel);
// results are rounded to nearest. dst is reallocated only when its size or type changes.
void ResampleBilinear(const cv::Mat& src, const cv::Rect2d& box, cv::Size out, cv::Mat* dst);

}  // namespace shardpack
