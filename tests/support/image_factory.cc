#include "tests/support/image_factory.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <stdexcept>
#include <vector>

namespace shardpack::testing {

std::string MakePixels(int width, int height, uint64_t seed, int noise) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> jitter(-noise, noise);
  const double fx = 0.01 + (rng() % 100) / 4000.0, fy = 0.01 + (rng() % 100) / 4000.0;
  const int base[3] = {int(rng() % 200), int(rng() % 200), int(rng() % 200)};
  std::string rgb(size_t(width) * height * 3, '\0');
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        double wave = 40 * std::sin(fx * x * (c + 1)) + 40 * std::cos(fy * y * (3 - c));
        int v = base[c] + int(wave) + (noise ? jitter(rng) : 0);
        rgb[(size_t(y) * width + x) * 3 + c] = static_cast<char>(std::clamp(v, 0, 255));
      }
    }
  }
  return rgb;
}

std::string EncodeJpeg(const std::string& rgb, int width, int height, int quality) {
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  int rc = tjCompress2(tj, reinterpret_cast<const unsigned char*>(rgb.data()), width, 0, height, TJPF_RGB, &out, &size,
                       TJSAMP_420, quality, 0);
  std::string jpeg;
  if (rc == 0) jpeg.assign(reinterpret_cast<char*>(out), size);
  tjFree(out);
  tjDestroy(tj);
  if (rc != 0) throw std::runtime_error("tjCompress2 failed");
  return jpeg;
}

std::string EncodeWithOpenCv(const std::string& rgb, int width, int height, ImageFormat format) {
  cv::Mat rgb_mat(height, width, CV_8UC3, const_cast<char*>(rgb.data()));
  cv::Mat bgr;
  cv::cvtColor(rgb_mat, bgr, cv::COLOR_RGB2BGR);
  std::vector<uchar> buf;
  std::vector<int> params;
  const char* ext = ".png";
  if (format == ImageFormat::kWebp) {
    ext = ".webp";
    params = {cv::IMWRITE_WEBP_QUALITY, 101};  // > 100: lossless
  } else if (format == ImageFormat::kBmp) {
    ext = ".bmp";
  }
  if (!cv::imencode(ext, bgr, buf, params)) throw std::runtime_error("imencode failed");
  return std::string(buf.begin(), buf.end());
}

std::string EncodeGreyPng(const std::string& grey, int width, int height) {
  const cv::Mat mat(height, width, CV_8UC1, const_cast<char*>(grey.data()));
  std::vector<uchar> buf;
  if (!cv::imencode(".png", mat, buf)) throw std::runtime_error("imencode failed");
  return std::string(buf.begin(), buf.end());
}

std::string WithExifOrientation(const std::string& jpeg, uint16_t orientation) {
  std::string tiff = std::string("MM\0*\0\0\0\x08", 8) + std::string("\0\x01", 2) +  // one IFD entry
                     std::string("\x01\x12\0\x03\0\0\0\x01", 8) + std::string(1, '\0') +
                     std::string(1, static_cast<char>(orientation)) + std::string(2, '\0') + std::string(4, '\0');
  std::string payload = std::string("Exif\0\0", 6) + tiff;
  const size_t len = payload.size() + 2;
  std::string app1 = std::string("\xFF\xE1", 2) + static_cast<char>(len >> 8) + static_cast<char>(len & 0xFF) + payload;
  return jpeg.substr(0, 2) + app1 + jpeg.substr(2);
}

std::string MakeImage(ImageFormat format, int width, int height, uint64_t seed) {
  std::string rgb = MakePixels(width, height, seed);
  if (format == ImageFormat::kJpeg) return EncodeJpeg(rgb, width, height);
  return EncodeWithOpenCv(rgb, width, height, format);
}

}  // namespace shardpack::testing
