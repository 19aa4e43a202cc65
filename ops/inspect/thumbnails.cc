// Thumbnails for the report: a seeded choice of samples, each decoded at a reduced DCT scale straight
// into a centre square (DecodeAndTransform, as pack --format raw cuts), then encoded as a small JPEG.
#include "shardpack/thumbnails.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>

#include "ground/jpeg_encoder.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

// A raw sample's stored pixels, cut to the centre square as DecodeAndTransform cuts an encoded one:
// shorter side resized to `side`, then cropped.
void ShrinkPixels(const DecodedImage& image, uint32_t side, cv::Mat* out) {
  const cv::Mat rgb(int(image.height), int(image.width), CV_8UC3, const_cast<uint8_t*>(image.rgb.data()));
  const double scale = double(side) / std::min(image.width, image.height);
  const int w = std::max(int(side), int(std::lround(image.width * scale)));
  const int h = std::max(int(side), int(std::lround(image.height * scale)));
  cv::Mat resized;
  cv::resize(rgb, resized, cv::Size(w, h), 0, 0, cv::INTER_AREA);
  (*out) = resized(cv::Rect((w - int(side)) / 2, (h - int(side)) / 2, int(side), int(side))).clone();
}

// Fills `t` from a sample read: its shown size and its thumbnail, or the reason it has none.
Status Thumb(const ReadSample& sample, const ThumbnailOptions& options, Thumbnail* t) {
  t->key = sample.key;
  t->label = sample.label;
  cv::Mat square;
  if (sample.encoded.empty()) {  // raw: pixels stored as shown
    t->width = sample.pixels.width;
    t->height = sample.pixels.height;
    if (t->width == 0 || t->height == 0) {
      t->error = "no pixels stored";
      return Status::OK();
    }
    ShrinkPixels(sample.pixels, options.side, &square);
  } else {
    ImageInfo info;
    Status probed = ProbeImage(sample.encoded, &info);
    TransformOptions transform;
    transform.resize_shorter = options.side;
    transform.crop_width = transform.crop_height = options.side;
    DecodedImage decoded;
    if (probed.ok()) probed = DecodeAndTransform(sample.encoded, transform, &decoded);
    if (!probed.ok()) {
      t->error = probed.message();
      return Status::OK();
    }
    const bool turned = info.format == ImageFormat::kJpeg && JpegExifOrientation(sample.encoded) >= 5;
    t->width = turned ? info.height : info.width;
    t->height = turned ? info.width : info.height;
    square = cv::Mat(int(decoded.height), int(decoded.width), CV_8UC3, decoded.rgb.data()).clone();
  }
  return EncodeJpeg(square, options.quality, "", &t->jpeg);
}

}  // namespace

std::vector<uint64_t> ThumbnailPositions(uint64_t samples, uint32_t count, uint64_t seed) {
  // Floyd's sampling: `n` distinct positions in n draws, whatever the dataset's size. mt19937_64
  // and this loop are fully specified, so the choice is the same on every platform.
  const uint64_t n = std::min<uint64_t>(count, samples);
  std::mt19937_64 random(seed);
  std::set<uint64_t> chosen;
  for (uint64_t j = samples - n; j < samples; ++j) {
    const uint64_t t = random() % (j + 1);
    chosen.insert(chosen.count(t) ? j : t);
  }
  return {chosen.begin(), chosen.end()};
}

Status MakeThumbnails(const std::string& location, const ThumbnailOptions& options, std::vector<Thumbnail>* out) {
  out->clear();
  std::unique_ptr<DatasetReader> reader;
  SHARDPACK_RETURN_IF_ERROR(DatasetReader::Open(location, options.env, &reader, options.remote));
  ReadSample sample;
  for (uint64_t index : ThumbnailPositions(reader->size(), options.count, options.seed)) {
    Thumbnail t;
    t.index = index;
    // A sample that cannot be read (a shard missing or cut short) is shown as such: the report of
    // a damaged dataset is the one most worth having.
    if (const Status read = reader->Read(index, &sample); !read.ok()) {
      t.error = "not read: " + read.message();
    } else {
      SHARDPACK_RETURN_IF_ERROR(Thumb(sample, options, &t));
    }
    out->push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace shardpack
