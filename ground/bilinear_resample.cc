#include "ground/bilinear_resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace shardpack {
namespace {

// For each output index, the two source indices it blends and the weight of the second (0..256).
struct Taps {
  std::vector<int> first, second;
  std::vector<uint16_t> weight;

  void Compute(double start, double step, int out, int size) {
    first.resize(size_t(out));
    second.resize(size_t(out));
    weight.resize(size_t(out));
    for (int j = 0; j < out; ++j) {
      const double x = start + (j + 0.5) * step - 0.5;
      const double floor_x = std::floor(x);
      int x0 = int(floor_x);
      int w = int(std::lround((x - floor_x) * 256));
      if (w == 256) {  // rounds up to the next pixel
        ++x0;
        w = 0;
      }
      first[size_t(j)] = std::clamp(x0, 0, size - 1);
      second[size_t(j)] = std::clamp(x0 + 1, 0, size - 1);
      weight[size_t(j)] = uint16_t(w);
    }
  }
};

// The resize for `channels` channels; a compile-time count lets the compiler unroll the inner loop.
template <int kChannels>
void Resample(const cv::Mat& src, const Taps& cols, const Taps& rows, int channels_at_run_time, cv::Mat* dst,
              std::vector<uint16_t>* blended) {
  const int channels = kChannels > 0 ? kChannels : channels_at_run_time;
  // Only the source columns some output pixel reads are blended.
  const int lo = cols.first.front(), hi = cols.second.back();
  const size_t span = size_t(hi - lo + 1) * channels;
  blended->resize(span);
  uint16_t* v = blended->data();
  for (int i = 0; i < dst->rows; ++i) {
    const uint8_t* a = src.ptr<uint8_t>(rows.first[size_t(i)]) + size_t(lo) * channels;
    const uint8_t* b = src.ptr<uint8_t>(rows.second[size_t(i)]) + size_t(lo) * channels;
    const uint16_t wb = rows.weight[size_t(i)], wa = uint16_t(256 - wb);
    for (size_t k = 0; k < span; ++k) v[k] = uint16_t(a[k] * wa + b[k] * wb);  // at most 255 * 256
    uint8_t* o = dst->ptr<uint8_t>(i);
    for (int j = 0; j < dst->cols; ++j) {
      const uint16_t* p = v + size_t(cols.first[size_t(j)] - lo) * channels;
      const uint16_t* q = v + size_t(cols.second[size_t(j)] - lo) * channels;
      const uint32_t wq = cols.weight[size_t(j)], wp = 256 - wq;
      for (int c = 0; c < channels; ++c) *o++ = uint8_t((p[c] * wp + q[c] * wq + (1u << 15)) >> 16);
    }
  }
}

}  // namespace

void ResampleBilinear(const cv::Mat& src, const cv::Rect2d& box, cv::Size out, cv::Mat* dst) {
  CV_Assert(src.depth() == CV_8U && !src.empty() && out.width > 0 && out.height > 0 && box.width > 0 &&
            box.height > 0 && dst->data != src.data);
  // Scratch reused by every call on this thread: taps and one vertically blended row.
  thread_local Taps cols, rows;
  thread_local std::vector<uint16_t> blended;
  cols.Compute(box.x, box.width / out.width, out.width, src.cols);
  rows.Compute(box.y, box.height / out.height, out.height, src.rows);
  dst->create(out, src.type());
  if (src.channels() == 3) {
    Resample<3>(src, cols, rows, 3, dst, &blended);
  } else {
    Resample<0>(src, cols, rows, src.channels(), dst, &blended);
  }
}

}  // namespace shardpack
