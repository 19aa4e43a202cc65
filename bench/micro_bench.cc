// Micro-benchmarks of what pack does per image besides reading it: probing the header, hashing,
// and appending members to a tar shard; of decoding and the flip; and of what a loader with buckets does per
// sample at open (parsing a sample table, finding a bucket). Run: build/release/bench/shardpack_micro_bench
#include <benchmark/benchmark.h>
#include <turbojpeg.h>

#include <climits>
#include <cstdio>
#include <vector>

#include "formats/wds/tar_shard_writer.h"
#include "ground/bilinear_resample.h"
#include "ground/checksum.h"
#include "ground/jpeg_region_decoder.h"
#include "ground/mirror_rgb.h"
#include "ground/sample_table.h"
#include "shardpack/buckets.h"
#include "shardpack/image.h"
#include "tests/support/image_factory.h"

namespace shardpack {
namespace {

// An ImageNet-like JPEG: 500x375 at about 110 KB (the bench-pack.sh tree's noise level).
const std::string& Jpeg() {
  static const std::string jpeg = testing::EncodeJpeg(testing::MakePixels(500, 375, 1, 46), 500, 375);
  return jpeg;
}

void BM_ProbeJpeg(benchmark::State& state) {
  ImageInfo info;
  for (auto _ : state) benchmark::DoNotOptimize(ProbeImage(Jpeg(), &info));
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
}
BENCHMARK(BM_ProbeJpeg);

void BM_DecodeJpeg(benchmark::State& state) {
  DecodedImage image;
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(Jpeg(), 1u << 30, &image));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJpeg);

// Decode only, at DCT scale num/8 (8 = full decode): the gain of scaled decode alone.
void BM_DecodeJpegAtScale(benchmark::State& state) {
  const int num = static_cast<int>(state.range(0));
  tjhandle tj = tjInitDecompress();
  const tjscalingfactor f{num, 8};
  const int w = TJSCALED(500, f), h = TJSCALED(375, f);
  std::vector<unsigned char> out(size_t(w) * h * 3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(tjDecompress2(tj, reinterpret_cast<const unsigned char*>(Jpeg().data()), Jpeg().size(),
                                           out.data(), w, 0, h, TJPF_RGB, static_cast<int>(state.range(1))));
  }
  tjDestroy(tj);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJpegAtScale)
    ->Args({8, 0})
    ->Args({6, 0})
    ->Args({4, 0})
    ->Args({2, 0})
    ->Args({1, 0})
    ->Args({8, TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE});

// Entropy decoding alone (jpeg_read_coefficients: Huffman-decodes every block, no IDCT, no colour
// conversion): set beside BM_DecodeJpegAtScale, how much of a decode no scale or crop can save.
void BM_EntropyDecodeJpeg(benchmark::State& state) {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr error;
  cinfo.err = jpeg_std_error(&error);
  jpeg_create_decompress(&cinfo);
  for (auto _ : state) {
    jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(Jpeg().data()), Jpeg().size());
    jpeg_read_header(&cinfo, TRUE);
    benchmark::DoNotOptimize(jpeg_read_coefficients(&cinfo));
    jpeg_abort_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EntropyDecodeJpeg);

// The top `eighths`/8 of the rows, full width, at full scale with the fast IDCT: a crop's decode
// stops at its last row (the rows below are never entropy-decoded), so its cost follows the rows
// down to the crop's end. A bucket's cut needs every row; a random-resized crop ends on average at
// 0.86 of the height (scripts/bench_buckets.py prints it for its images).
void BM_DecodeJpegTopRows(benchmark::State& state) {
  JpegRegionDecoder decoder;
  cv::Mat region;
  cv::Rect2d box;
  const double rows = 375.0 * double(state.range(0)) / 8;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decoder.ReadHeader(Jpeg(), 1u << 30));
    benchmark::DoNotOptimize(
        decoder.DecodeRegion(cv::Rect2d(0, 0, 500, rows), cv::Size(INT_MAX, INT_MAX), true, &region, &box));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJpegTopRows)->Arg(8)->Arg(7)->Arg(6)->Arg(4);

// The crop-only decode of pack --format raw --resize 256 --crop 224 alone (no resize): the box is
// the 328x328 centre of the 500x375 image. Arg: 1 = fast IDCT and upsampling.
void BM_DecodeJpegRegion(benchmark::State& state) {
  JpegRegionDecoder decoder;
  cv::Mat region;
  cv::Rect2d box;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decoder.ReadHeader(Jpeg(), 1u << 30));
    benchmark::DoNotOptimize(decoder.DecodeRegion(cv::Rect2d(86, 23.5, 328, 328), cv::Size(INT_MAX, INT_MAX),
                                                  state.range(0) != 0, &region, &box));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJpegRegion)->Arg(0)->Arg(1);

// What pack --format raw --resize 256 --crop 224 does per image, with and without scaled decode.
void BM_TransformJpeg(benchmark::State& state) {
  TransformOptions t;
  t.resize_shorter = 256;
  t.crop_height = t.crop_width = 224;
  t.scaled_decode = state.range(0) != 0;
  DecodedImage image;
  for (auto _ : state) benchmark::DoNotOptimize(DecodeAndTransform(Jpeg(), t, &image));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformJpeg)->Arg(1)->Arg(0);

// The resample of pack --format raw --resize 256 --crop 224 alone: the 328x328 box at its sub-pixel
// position in the decoded 332x332 region (two pixels of margin), to 224x224 RGB.
void BM_ResampleBilinear(benchmark::State& state) {
  std::string pixels = testing::MakePixels(332, 332, 3, 46);
  const cv::Mat src(332, 332, CV_8UC3, pixels.data());
  cv::Mat out;
  for (auto _ : state) {
    ResampleBilinear(src, cv::Rect2d(2.25, 2.5, 328, 328), cv::Size(224, 224), &out);
    benchmark::DoNotOptimize(out.data);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ResampleBilinear);

// The training transform's horizontal flip of a 224x224 RGB crop, in place: cv::flip (0) against
// MirrorRgbInPlace (1), which the loader uses.
void BM_MirrorRgb(benchmark::State& state) {
  std::string pixels = testing::MakePixels(224, 224, 3, 46);
  cv::Mat image(224, 224, CV_8UC3, pixels.data());
  for (auto _ : state) {
    if (state.range(0) == 0)
      cv::flip(image, image, 1);
    else
      MirrorRgbInPlace(&image);
    benchmark::DoNotOptimize(image.data);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MirrorRgb)->Arg(0)->Arg(1);

void BM_Xxh64(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Xxh64(Jpeg()));
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
}
BENCHMARK(BM_Xxh64);

void BM_TarAppend(benchmark::State& state) {
  const std::string path = "/tmp/shardpack_micro_bench.tar";
  std::unique_ptr<WritableFile> file;
  if (!Env::Default()->NewWritableFile(path, &file).ok()) {
    state.SkipWithError("cannot create temporary file");
    return;
  }
  TarShardWriter writer(std::move(file));
  uint64_t offset = 0;
  for (auto _ : state) {
    writer.BeginRange();
    benchmark::DoNotOptimize(writer.AddMember("000000001.jpg", Jpeg(), &offset));
    benchmark::DoNotOptimize(writer.range_checksum());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
  (void)writer.Finish(false);
  std::remove(path.c_str());
}
BENCHMARK(BM_TarAppend);

// A sample table of 10,000 lines as pack writes them for small JPEGs (54 bytes a line, as in the
// scale benchmark's shard): what a loader with buckets reads of every shard at open.
const std::string& SampleTable() {
  static const std::string table = [] {
    std::vector<SampleRecord> records(10000);
    for (size_t i = 0; i < records.size(); ++i) {
      char key[16];
      std::snprintf(key, sizeof key, "%09zu", i);
      records[i].key = key;
      records[i].offset = i * 4608;
      records[i].size = 4608;
      records[i].xxh64 = Xxh64(key);
      records[i].label = int32_t(i % 10);
      records[i].format = ImageFormat::kJpeg;
      records[i].width = uint32_t(40 + i % 31);
      records[i].height = uint32_t(30 + i % 17);
    }
    return FormatSampleTable(records, false);
  }();
  return table;
}

// The whole records (stat, the reader) against the sizes alone (buckets, token budgets); items are
// samples.
void BM_ParseSampleTable(benchmark::State& state) {
  std::vector<SampleRecord> records;
  for (auto _ : state) benchmark::DoNotOptimize(ParseSampleTable(SampleTable(), &records));
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(records.size()));
}
BENCHMARK(BM_ParseSampleTable);

void BM_ParseShownSizes(benchmark::State& state) {
  std::vector<ShownSize> sizes;
  for (auto _ : state) benchmark::DoNotOptimize(ParseShownSizes(SampleTable(), &sizes));
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(sizes.size()));
}
BENCHMARK(BM_ParseShownSizes);

// A bucket for each of 1,000 sizes, with SDXL's 41 buckets: NearestBucket makes a finder (every
// bucket's aspect ratio, sorted) on each call, NearestBucketFinder once. Items are images.
void BM_NearestBucket(benchmark::State& state) {
  std::vector<Bucket> buckets;
  if (!ParseBuckets("sdxl", "--buckets", &buckets).ok()) state.SkipWithError("no sdxl preset");
  const NearestBucketFinder finder(buckets);
  const bool once = state.range(0) == 1;
  for (auto _ : state) {
    for (uint32_t i = 0; i < 1000; ++i) {
      const uint32_t w = 300 + i, h = 1300 - i;
      benchmark::DoNotOptimize(once ? finder(w, h) : NearestBucket(buckets, w, h));
    }
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 1000);
  state.SetLabel(once ? "NearestBucketFinder" : "NearestBucket");
}
BENCHMARK(BM_NearestBucket)->Arg(0)->Arg(1);

}  // namespace
}  // namespace shardpack

BENCHMARK_MAIN();
