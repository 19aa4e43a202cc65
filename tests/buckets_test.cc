// Aspect-ratio buckets (shardpack/buckets.h): the presets, the generating rule and the assignment,
// against values computed by hand from the rules docs/buckets.md states.
#include "shardpack/buckets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace shardpack {
namespace {

std::vector<Bucket> Parsed(const std::string& spec) {
  std::vector<Bucket> b;
  const Status s = ParseBuckets(spec, "--buckets", &b);
  EXPECT_TRUE(s.ok()) << s.message();
  return b;
}

std::string Refusal(const std::string& spec) {
  std::vector<Bucket> b;
  const Status s = ParseBuckets(spec, "--buckets", &b);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(b.empty());
  return s.message();
}

TEST(Buckets, SdxlIsThePapersFortyOneResolutionsOfAboutAMegapixel) {
  const std::vector<Bucket> b = Parsed("sdxl");
  ASSERT_EQ(b.size(), 41u);
  EXPECT_EQ(b.front(), (Bucket{512, 2048}));
  EXPECT_EQ(b[20], (Bucket{1024, 1024}));
  EXPECT_EQ(b.back(), (Bucket{2048, 512}));
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].width % 64, 0u);
    EXPECT_EQ(b[i].height % 64, 0u);
    const double area = double(b[i].width) * b[i].height;
    EXPECT_GE(area, 0.9 * 1024 * 1024) << i;  // 704x1344 = 0.90 megapixels the smallest
    EXPECT_LE(area, 1.0 * 1024 * 1024) << i;
    // Each the transpose of its mirror in the list, in order of aspect ratio.
    EXPECT_EQ(b[i].width, b[b.size() - 1 - i].height);
    if (i > 0) {
      EXPECT_GT(double(b[i].width) / b[i].height, double(b[i - 1].width) / b[i - 1].height);
    }
  }
}

TEST(Buckets, TheRuleMakesWhatKohyaMakesByHand) {
  // area 256x256 in 64-pixel steps: 16 blocks. The square: 4 blocks a side, 256. Sides 128..512:
  // 128 -> 16 / 2 = 8 blocks, 512 (max 512); 192 -> 16 / 3 = 5, 320; 256 -> 4, 256; 320 -> 3, 192;
  // 384 -> 2, 128; 448 -> 2, 128; 512 -> 2, 128. Both orientations, sorted.
  const std::vector<Bucket> want = {{128, 384}, {128, 448}, {128, 512}, {192, 320}, {256, 256},
                                    {320, 192}, {384, 128}, {448, 128}, {512, 128}};
  EXPECT_EQ(Parsed("area=256x256,step=64,min=128,max=512"), want);
  // max-ratio 3 drops 128x448 (3.5) and 128x512 (4) each way; 128x384 is 3, kept.
  const std::vector<Bucket> within = {{128, 384}, {192, 320}, {256, 256}, {320, 192}, {384, 128}};
  EXPECT_EQ(Parsed("area=256x256,step=64,min=128,max=512,max-ratio=3"), within);
  BucketRule rule;
  rule.area_width = rule.area_height = 256;
  rule.min_side = 128;
  rule.max_side = 512;
  EXPECT_EQ(MakeBuckets(rule), want);
}

TEST(Buckets, AListKeepsItsOrderAndDropsRepeats) {
  EXPECT_EQ(Parsed("640x480,480x640,640x480"), (std::vector<Bucket>{{640, 480}, {480, 640}}));
}

TEST(Buckets, BadSpecsAreRefusedSayingWhatIsWrong) {
  const std::string forms =
      " (a preset: sdxl; a list: 1024x1024,1152x896,...; or a rule: area=1024x1024,step=64,min=512,max=2048)";
  EXPECT_EQ(Refusal(""), "--buckets: no buckets given" + forms);
  EXPECT_EQ(Refusal("sdx"), "--buckets: 'sdx' is not a preset" + forms);
  EXPECT_EQ(Refusal("640x480,640"), "--buckets: '640' is not a size WIDTHxHEIGHT" + forms);
  EXPECT_EQ(Refusal("640x480,"), "--buckets: '' is not a size WIDTHxHEIGHT" + forms);
  EXPECT_EQ(Refusal("0x512"), "--buckets: bucket 0x512 has a side of 0 pixels");
  EXPECT_EQ(Refusal("area=1024x1024,step=64,min=512,max=2000"),
            "--buckets: step=64 does not divide 2000: every side of the rule is a whole number of steps");
  EXPECT_EQ(Refusal("area=1024x1024,step=64,min=1024,max=512"), "--buckets: min=1024 is above max=512");
  EXPECT_EQ(Refusal("area=1024x1024,step=64,min=512"),
            "--buckets: the rule lacks a part (a rule is area=WxH,step=S,min=A,max=B, optionally max-ratio=R)");
  EXPECT_EQ(Refusal("area=1024x1024,step=0,min=512,max=1024"),
            "--buckets: step=0: step takes a whole number of pixels from 1 to 65536");
  EXPECT_EQ(Refusal("area=1024,step=64,min=512,max=1024"),
            "--buckets: area=1024: area takes WIDTHxHEIGHT, e.g. area=1024x1024");
  EXPECT_EQ(Refusal("area=1024x1024,step=64,min=512,max=1024,side=3"),
            "--buckets: 'side=3' is not a rule's part (a rule is area=WxH,step=S,min=A,max=B, optionally "
            "max-ratio=R)");
  EXPECT_EQ(Refusal("area=1024x1024,step=64,min=512,max=1024,max-ratio=0.5"),
            "--buckets: max-ratio=0.5 is not a ratio of at least 1");
  std::vector<Bucket> b;
  EXPECT_EQ(ParseBuckets("sdx", "buckets", &b).message().rfind("buckets: 'sdx'", 0), 0u);  // the caller's words
}

TEST(Buckets, AnImageGoesToTheNearestAspectRatioOnALogScale) {
  const std::vector<Bucket> b = {{100, 100}, {400, 100}, {100, 200}};
  EXPECT_EQ(NearestBucket(b, 300, 290), 0u);
  EXPECT_EQ(NearestBucket(b, 500, 100), 1u);
  EXPECT_EQ(NearestBucket(b, 90, 200), 2u);
  // 2:1 lies ln 2 from 1:1 and ln 2 from 4:1 (on a linear scale it would be nearer 1:1): a tie,
  // the first listed.
  EXPECT_EQ(NearestBucket(b, 200, 100), 0u);
  EXPECT_EQ(NearestBucket({{400, 100}, {100, 100}}, 200, 100), 0u);
  // 2.9:1 is nearer 4:1 on a log scale (ln 4 - ln 2.9 = 0.32 < ln 2.9 = 1.06).
  EXPECT_EQ(NearestBucket(b, 290, 100), 1u);
}

// The finder looks each image up in the sorted aspect ratios; the scan written here goes through the
// list as docs/buckets.md states the rule (the least |ln(w/h) - ln(bw/bh)|, the first listed on a
// tie). They agree on every image of every list: SDXL's, lists with repeated aspects (512x512 after
// 1024x1024), mirrored pairs (2:1 and 1:2 tie for 1:1), one bucket, and random lists, for random
// sizes and for each bucket's own aspect and the points between two buckets.
TEST(Buckets, TheFinderChoosesWhatTheScanChooses) {
  const auto scan = [](const std::vector<Bucket>& buckets, uint32_t w, uint32_t h) {
    size_t best = 0;
    double least = 0;
    for (size_t i = 0; i < buckets.size(); ++i) {
      const double d = std::fabs(std::log(double(w) / h) - std::log(double(buckets[i].width) / buckets[i].height));
      if (i == 0 || d < least) best = i, least = d;
    }
    return best;
  };
  std::vector<std::vector<Bucket>> lists(4);
  ASSERT_TRUE(ParseBuckets("sdxl", "buckets", &lists[0]).ok());
  lists[1] = {{1024, 1024}, {200, 100}, {512, 512}, {100, 200}, {400, 200}, {64, 64}};
  lists[2] = {{200, 100}, {100, 200}};
  lists[3] = {{300, 200}};
  std::mt19937 rng(7);
  for (int l = 0; l < 40; ++l) {
    std::vector<Bucket> random(1 + rng() % 20);
    for (Bucket& b : random) b = {1 + uint32_t(rng() % 64) * 16, 1 + uint32_t(rng() % 64) * 16};
    lists.push_back(random);
  }
  size_t checked = 0;
  for (const std::vector<Bucket>& buckets : lists) {
    const NearestBucketFinder finder(buckets);
    std::vector<std::pair<uint32_t, uint32_t>> sizes = {{1, 1}, {1, 10000}, {10000, 1}, {100, 100}};
    for (int i = 0; i < 2000; ++i) sizes.emplace_back(1 + rng() % 8000, 1 + rng() % 8000);
    for (const Bucket& a : buckets) {
      sizes.emplace_back(a.width, a.height);
      for (const Bucket& b : buckets) sizes.emplace_back(a.width + b.width, a.height + b.height);
    }
    for (const auto& [w, h] : sizes) {
      ASSERT_EQ(finder(w, h), scan(buckets, w, h)) << w << "x" << h << " among " << buckets.size();
      ++checked;
    }
  }
  EXPECT_GT(checked, 80'000u);
  const NearestBucketFinder mirrored({{200, 100}, {100, 200}});
  EXPECT_EQ(mirrored(100, 100), 0u);  // the tie, by hand: ln 2 either way, the first listed
  const NearestBucketFinder mirrored_back({{100, 200}, {200, 100}});
  EXPECT_EQ(mirrored_back(100, 100), 0u);
  const NearestBucketFinder repeated({{1024, 1024}, {200, 100}, {512, 512}});
  EXPECT_EQ(repeated(90, 100), 0u);  // 1:1 twice: the first listed of the two
}

TEST(Buckets, TheCropIsWhatCoveringTheBucketLeavesOver) {
  EXPECT_DOUBLE_EQ(CroppedShare({100, 100}, 200, 100), 0.5);     // scaled to 200x100 -> 100x100
  EXPECT_DOUBLE_EQ(CroppedShare({1024, 768}, 4000, 3000), 0.0);  // the same 4:3
  // 3000x2000 to cover 1024x1024: scale 1024/2000, 1536x1024, 512 of 1536 columns cut.
  EXPECT_NEAR(CroppedShare({1024, 1024}, 3000, 2000), 1.0 / 3, 1e-12);
}

// bucket_no_upscale and a minimum side, worked by hand over 1024x1024, 1152x896, 896x1152, 512x512:
// 1000x800 (aspect 1.25) is nearest 1152x896 (1.29) but smaller than it, and covers only 512x512;
// 2000x1500 covers 1152x896; 400x400 covers none; with min_side 600, 500x2000 is in none.
TEST(Buckets, NoUpscaleTakesTheNearestBucketTheImageCoversAndMinSideLeavesSmallOnesOut) {
  const std::vector<Bucket> buckets = {{1024, 1024}, {1152, 896}, {896, 1152}, {512, 512}};
  const BucketChooser nearest(buckets, BucketChoice());
  EXPECT_EQ(nearest(1000, 800), 1u);
  EXPECT_EQ(nearest(400, 400), 0u);
  BucketChoice no_upscale;
  no_upscale.no_upscale = true;
  const BucketChooser covered(buckets, no_upscale);
  EXPECT_EQ(covered(1000, 800), 3u);
  EXPECT_EQ(covered(2000, 1500), 1u);
  EXPECT_EQ(covered(1024, 1024), 0u);  // exactly its size: covered
  EXPECT_EQ(covered(1023, 1024), 3u);
  EXPECT_EQ(covered(400, 400), BucketChooser::kNoBucket);
  BucketChoice min_side;
  min_side.min_side = 600;
  const BucketChooser at_least(buckets, min_side);
  EXPECT_EQ(at_least(500, 2000), BucketChooser::kNoBucket);
  EXPECT_EQ(at_least(600, 600), 0u);
  EXPECT_EQ(at_least(1200, 1200), 0u);
}

}  // namespace
}  // namespace shardpack
