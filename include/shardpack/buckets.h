// Aspect-ratio buckets (docs/buckets.md): the shapes images are resized to cover and cropped to, so
// that each image keeps close to its own aspect ratio instead of being cut square. Presets, explicit
// lists and kohya-ss's generating rule; which bucket an image goes to; how much of it a bucket crops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

struct Bucket {
  uint32_t width = 0;
  uint32_t height = 0;
  bool operator==(const Bucket& o) const { return width == o.width && height == o.height; }
};

// The rule diffusion trainers generate buckets with (kohya-ss's make_bucket_resolutions): in blocks
// of step x step, the square of about `area`, and for every side s from min_side to max_side in
// steps of `step` the bucket s x t and t x s, t = min(max_side, floor(area blocks / (s / step)) x
// step); then those whose longer side is more than max_ratio times the shorter are dropped (0: none).
struct BucketRule {
  uint32_t area_width = 1024, area_height = 1024;  // the target area, as width x height
  uint32_t step = 64;
  uint32_t min_side = 256, max_side = 1024;
  double max_ratio = 0;
};

// Generates the rule's buckets, sorted by width, then height. Expects a checked rule (ParseBuckets).
std::vector<Bucket> MakeBuckets(const BucketRule& rule);

// `spec` as the command line and Python take it: a preset ("sdxl": the 41 resolutions of the SDXL
// paper), a list "1024x1024,1152x896,...", or a rule "area=1024x1024,step=64,min=512,max=2048"
// (optionally ",max-ratio=4"). InvalidArgument naming what is wrong (`option` names the option in
// the caller's words, e.g. "--buckets" or "buckets").
Status ParseBuckets(const std::string& spec, const std::string& option, std::vector<Bucket>* buckets);

// The bucket an image of width x height (as shown) goes to: the one whose aspect ratio is nearest
// its own on a log scale (|ln(w/h) - ln(bw/bh)|; 2:1 is as far from 1:1 as 1:2), the first listed on
// a tie. Expects a non-empty list and sides above 0.
size_t NearestBucket(const std::vector<Bucket>& buckets, uint32_t width, uint32_t height);

// NearestBucket for many images: the buckets' log aspect ratios are worked out once and sorted, and
// each image's is looked up in them (a loader assigns every sample of the dataset at open; SDXL's
// preset has 41 buckets). The same choice as NearestBucket's scan, ties included.
class NearestBucketFinder {
 public:
  explicit NearestBucketFinder(const std::vector<Bucket>& buckets);
  size_t operator()(uint32_t width, uint32_t height) const;

 private:
  // The distinct values of ln(width / height) over the buckets, ascending, and for each the first
  // bucket listed with it.
  std::vector<double> log_aspects_;
  std::vector<size_t> first_listed_;
};

// Which images buckets take, besides the nearest aspect (kohya-ss's options of the same names):
// no_upscale (bucket_no_upscale): an image goes to the nearest in aspect ratio of the buckets it
// covers (bucket width and height at most its own, as shown), so that it is never enlarged, only
// shrunk; one smaller than every bucket is in none. min_side: an image whose shorter side is
// below it is in none (too small to train at these sizes). An image in no bucket is left out of
// the loader's batches, and counted (Loader::bucket_left_out, stat --buckets).
struct BucketChoice {
  bool no_upscale = false;
  uint32_t min_side = 0;
  bool any() const { return no_upscale || min_side > 0; }
};

// The bucket of each image under a BucketChoice: NearestBucketFinder's answer, or with no_upscale,
// the first listed of the buckets it covers that are nearest its aspect ratio; kNoBucket when none.
class BucketChooser {
 public:
  static constexpr size_t kNoBucket = SIZE_MAX;
  BucketChooser(const std::vector<Bucket>& buckets, BucketChoice choice);
  size_t operator()(uint32_t width, uint32_t height) const;

 private:
  std::vector<Bucket> buckets_;
  BucketChoice choice_;
  NearestBucketFinder nearest_;
};

// What becomes of each bucket's last batch of an epoch, when it holds fewer than batch_size images
// (docs/buckets.md): left out (kDrop: every batch is full), handed out smaller (kPartial: every
// sample once an epoch), or filled up with that bucket's first images of the epoch again (kPad:
// every batch full and every sample taken).
enum class BucketTail { kDrop, kPartial, kPad };

// "drop", "partial" or "pad"; InvalidArgument naming `option` otherwise.
Status ParseBucketTail(const std::string& text, const std::string& option, BucketTail* tail);
const char* BucketTailName(BucketTail tail);

// Native resolution (docs/buckets.md): an image of width x height (as shown) scaled, never enlarged,
// so that its longer side is at most max_side (0: as it is), then each side rounded down to a
// multiple of `patch`, at least one patch. Expects sides and patch above 0.
Bucket PatchedSize(uint32_t width, uint32_t height, uint32_t max_side, uint32_t patch);

// The pixels of the largest bucket (0 for none): what a batch buffer must hold an image of.
uint64_t LargestBucketPixels(const std::vector<Bucket>& buckets);

// The scale an image of width x height is resized by to cover `bucket` (both sides at least the
// bucket's): above 1, it is enlarged.
double CoverScale(const Bucket& bucket, uint32_t width, uint32_t height);

// The share of an image's pixels a bucket crops away: the image scaled (up or down) to cover the
// bucket, then cut to it; 0 when the aspect ratios are equal.
double CroppedShare(const Bucket& bucket, uint32_t width, uint32_t height);

}  // namespace shardpack
