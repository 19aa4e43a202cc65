// Label masks in the loader: each sample's "seg.png" gets exactly its image's crop and flip.
//
// The images are coordinate ramps (red = x, green = y, lossless PNG) and each mask holds its own x
// (even samples) or y (odd samples). Bilinear resampling keeps a ramp a ramp, so wherever the image
// crop samples the source, its red (or green) value says where; the mask, resampled by nearest
// neighbour, must say the same to within one level. A wrong box, scale or flip breaks this by many
// levels over most of the crop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "shardpack/loader.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::WriteFile;

constexpr int kSamples = 12;
constexpr int kHeight = 24, kWidth = 32;  // output

int SampleWidth(int i) { return 40 + 17 * i; }  // up to 227: a coordinate fits in a byte
int SampleHeight(int i) { return 30 + 11 * i; }

class LoaderMaskTest : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // c0/img<i>.png (the ramps, with blue = i) and c0/img<i>.seg.png beside each.
  void MakeRampTree() {
    for (int i = 0; i < kSamples; ++i) {
      const int w = SampleWidth(i), h = SampleHeight(i);
      std::string rgb(size_t(w) * h * 3, '\0'), grey(size_t(w) * h, '\0');
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const size_t p = size_t(y) * w + x;
          rgb[3 * p] = char(x), rgb[3 * p + 1] = char(y), rgb[3 * p + 2] = char(i);
          grey[p] = char(i % 2 == 0 ? x : y);
        }
      }
      const std::string stem = src() + "/c0/img" + std::to_string(i);
      WriteFile(stem + ".png", testing::EncodeWithOpenCv(rgb, w, h, ImageFormat::kPng));
      WriteFile(stem + ".seg.png", testing::EncodeGreyPng(grey, w, h));
    }
  }

  // "raw-keep-size" and "raw-crop": raw shards, whose masks are stored as pixels, cut at pack time
  // as their images were (full size, or resized and centre-cropped), then cropped again by the loader.
  bool raw() const { return GetParam().rfind("raw", 0) == 0; }

  void PackRamps(std::vector<SkippedFile>* skipped = nullptr) {
    PackOptions po = QuietOptions();
    po.format = testing::FormatNamed(raw() ? "raw" : GetParam());
    po.keep_size = GetParam() == "raw-keep-size";
    if (GetParam() == "raw-crop") po.crop_height = 36, po.crop_width = 44;
    po.samples_per_shard = 5;
    po.path_keys = true;
    PackResult r;
    ASSERT_TRUE(PackTo(out(), po, &r).ok());
    if (skipped != nullptr) {
      *skipped = r.manifest.skipped;
    } else {
      ASSERT_TRUE(r.manifest.skipped.empty());
    }
  }

  // How far a mask value may be from its image's coordinate, in source pixels: one level, plus for
  // raw-crop half a stored pixel, since the loader resamples stored pixels whose own grid is
  // coarser (nearest neighbour for the mask picks a stored pixel the bilinear image blends between).
  int Tolerance(int width, int height) const {
    if (GetParam() != "raw-crop") return 1;
    const double stored_pixel = std::min(width, height) / 44.0;  // resize to 44
    return 1 + int(std::ceil(stored_pixel / 2));
  }

  static LoaderOptions Options(bool eval) {
    LoaderOptions o;
    o.sampler.batch_size = 4;
    o.sampler.seed = 3;
    o.height = kHeight;
    o.width = kWidth;
    o.threads = 2;
    o.eval = eval;
    o.eval_resize = 40;
    o.mask = "seg.png";
    return o;
  }
};

TEST_P(LoaderMaskTest, EveryMaskGetsItsImagesCropAndFlip) {
  MakeRampTree();
  PackRamps();
  for (const bool eval : {false, true}) {
    std::unique_ptr<Loader> loader;
    ASSERT_TRUE(Loader::Open(out(), Options(eval), &loader).ok());
    std::set<int> seen;
    int flipped = 0, upright = 0;
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
      ASSERT_TRUE(loader->StartEpoch(epoch).ok());
      for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
        ASSERT_NE(b->masks, nullptr);
        ASSERT_EQ(b->mask_bytes, size_t(b->count) * kHeight * kWidth);
        for (uint32_t n = 0; n < b->count; ++n) {
          const uint8_t* image = b->images + size_t(n) * kHeight * kWidth * 3;
          const uint8_t* mask = b->masks + size_t(n) * kHeight * kWidth;
          const int sample = image[2];  // blue
          seen.insert(sample);
          const int channel = sample % 2 == 0 ? 0 : 1;  // the coordinate this mask holds
          int worst = 0;
          for (int p = 0; p < kHeight * kWidth; ++p)
            worst = std::max(worst, std::abs(mask[p] - image[3 * p + channel]));
          EXPECT_LE(worst, Tolerance(SampleWidth(sample), SampleHeight(sample)))
              << "sample " << sample << (eval ? " eval" : " train") << " epoch " << epoch;
          if (channel == 0) (mask[0] > mask[kWidth - 1] ? flipped : upright)++;
        }
      }
    }
    EXPECT_EQ(seen.size(), size_t(kSamples));
    EXPECT_EQ(loader->stats().corrupt, 0u);
    if (eval) {
      EXPECT_EQ(flipped, 0);
    } else {
      EXPECT_GT(flipped, 0);  // both kinds happened, so the flip was tested
      EXPECT_GT(upright, 0);
    }
  }
}

TEST_P(LoaderMaskTest, AMissingOrColourMaskIsACorruptSampleNamedAndCounted) {
  MakeRampTree();
  // Sample 1 loses its mask; sample 2's mask becomes a colour image of the right size.
  ASSERT_EQ(std::remove((src() + "/c0/img1.seg.png").c_str()), 0);
  const int w = SampleWidth(2), h = SampleHeight(2);
  WriteFile(src() + "/c0/img2.seg.png",
            testing::EncodeWithOpenCv(std::string(size_t(w) * h * 3, '\x07'), w, h, ImageFormat::kPng));
  std::vector<SkippedFile> skipped;
  PackRamps(&skipped);
  if (raw()) {  // raw decodes masks at pack time: the colour one is a reported skip there
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].path, "c0/img2.png");
    EXPECT_EQ(skipped[0].reason,
              "field seg.png: mask has 3 channel(s) of 8 bits; a mask must be one 8-bit channel of class ids (a "
              "greyscale PNG, PIL mode L) (raw keeps image fields as label masks; --format wds or lmdb keeps any "
              "file)");
  } else {
    EXPECT_TRUE(skipped.empty());
  }
  LoaderOptions o = Options(false);
  o.sampler.shuffle = false;
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* b = nullptr;
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  // Keys in name order: img0, img1, img10, img11, img2, ...; img1 is left out of its batch.
  ASSERT_EQ(b->count, Options(false).sampler.batch_size - 1);
  EXPECT_EQ(b->keys[0], "c0_img0");
  EXPECT_EQ(b->keys[1], "c0_img10");
  EXPECT_EQ(b->indices[1], 2u);
  for (const int32_t label : b->labels) EXPECT_EQ(label, 0);
  EXPECT_EQ(b->mask_bytes, size_t(b->count) * kHeight * kWidth);
  std::vector<std::string> reports = loader->TakeSkipReports();
  do {
    ASSERT_TRUE(loader->Next(&b).ok());
    for (std::string& r : loader->TakeSkipReports()) reports.push_back(std::move(r));
  } while (b != nullptr);
  ASSERT_EQ(reports.size(), raw() ? 1u : 2u);
  EXPECT_EQ(reports[0], "skipped sample c0_img1 (index 1) has no mask field 'seg.png'");
  EXPECT_EQ(loader->stats().corrupt, raw() ? 1u : 2u);
  EXPECT_EQ(loader->stats().images, uint64_t(kSamples - 2));

  o.skip_corrupt = false;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  Status s = loader->Next(&b);
  EXPECT_EQ(s.message(), "sample c0_img1 (index 1) has no mask field 'seg.png'");
  if (raw()) return;  // img2 was not packed
  o.sampler.batch_size = 1;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0, 4).ok());  // index 4 is img2
  s = loader->Next(&b);
  EXPECT_EQ(s.message(),
            "sample c0_img2 (index 4), field 'seg.png': mask has 3 channel(s) of 8 bits; a mask must be one 8-bit "
            "channel of class ids (a greyscale PNG, PIL mode L)");
}

// A camera's JPEG whose EXIF orientation turns it (6: 90 degrees clockwise) is shown, and so
// labelled, at its turned size: its mask has that size, and lines up with the turned pixels. The
// JPEGs are grey ramps of their stored row (even samples) or column (odd), which after the turn
// are the shown (W - 1 - x) and y; each mask holds the shown values. A mask of the stored size is a
// reported skip. Tolerance: the ramps' JPEG loss (quality 100: up to 2 levels) on top of
// Tolerance()'s; a mask cut on the stored size, or not turned, is off by tens over most of the crop.
TEST_P(LoaderMaskTest, AnExifTurnedImagesMaskHasTheSizeItIsShownAt) {
  constexpr int kTurned = 6;
  for (int i = 0; i < kTurned; ++i) {
    const int w = 60 + 8 * i, h = 40 + 6 * i;  // stored; shown h x w
    std::string rgb(size_t(w) * h * 3, '\0'), mask(size_t(w) * h, '\0');
    for (int r = 0; r < h; ++r)
      for (int c = 0; c < w; ++c)
        for (int k = 0; k < 3; ++k) rgb[(size_t(r) * w + c) * 3 + k] = char(i % 2 == 0 ? r : c);
    for (int y = 0; y < w; ++y)  // shown: h wide, w high
      for (int x = 0; x < h; ++x) mask[size_t(y) * h + x] = char(i % 2 == 0 ? h - 1 - x : y);
    const std::string stem = src() + "/c0/img" + std::to_string(i);
    WriteFile(stem + ".jpg", testing::WithExifOrientation(testing::EncodeJpeg(rgb, w, h, 100), 6));
    WriteFile(stem + ".seg.png", testing::EncodeGreyPng(mask, h, w));
  }
  // A mask drawn on the stored size.
  WriteFile(src() + "/c0/img9.jpg", testing::WithExifOrientation(testing::MakeImage(ImageFormat::kJpeg, 50, 30, 1), 6));
  WriteFile(src() + "/c0/img9.seg.png", testing::EncodeGreyPng(std::string(50 * 30, '\0'), 50, 30));
  std::vector<SkippedFile> skipped;
  PackRamps(&skipped);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].path, "c0/img9.jpg");
  EXPECT_EQ(skipped[0].reason,
            "field seg.png is 50x30 pixels, its image 30x50 after its EXIF orientation; a mask must have its image's "
            "size");

  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), Options(false), &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  int seen = 0;
  for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
    for (uint32_t n = 0; n < b->count; ++n, ++seen) {
      const int i = std::stoi(b->keys[n].substr(std::string("c0_img").size()));
      const uint8_t* image = b->images + size_t(n) * kHeight * kWidth * 3;
      const uint8_t* mask = b->masks + size_t(n) * kHeight * kWidth;
      int worst = 0;
      for (int p = 0; p < kHeight * kWidth; ++p) worst = std::max(worst, std::abs(mask[p] - image[3 * p]));
      EXPECT_LE(worst, 2 + Tolerance(40 + 6 * i, 60 + 8 * i)) << "sample " << i;
    }
  }
  EXPECT_EQ(seen, kTurned);
  EXPECT_EQ(loader->stats().corrupt, 0u);
}

INSTANTIATE_TEST_SUITE_P(Formats, LoaderMaskTest, ::testing::Values("wds", "lmdb", "raw-keep-size", "raw-crop"));

}  // namespace
}  // namespace shardpack
