// The loader's crops: torchvision's random-resized-crop box for training, the resize-and-centre-crop
// box for evaluation, both on the image's full size; and a bucket's cover-and-cut. Shared by the loader and `shardpack
// doctor`, which measures the same decode.
#pragma once

#include <opencv2/core.hpp>
#include <random>

#include "ground/image_decode_rgb.h"
#include "shardpack/loader.h"

namespace shardpack {

// A uniform draw in [lo, hi) from the top 53 bits of one output of rng.
double Uniform(std::mt19937_64& rng, double lo, double hi);

// Training (o.eval false): the random-resized-crop box drawn on `full`, resized to o.width x
// o.height. Evaluation: the shorter side resized to o.eval_resize, then the centre crop, as a box
// on `full`.
CropPlan LoaderCropPlan(const LoaderOptions& o, std::mt19937_64* rng, cv::Size full);

// A bucket's crop (docs/buckets.md): the image scaled to cover the bucket (one side fits, the other
// overhangs), cut at a random offset along the overhang (`random`) or at its centre. Nothing is cut
// from the side that fits.
CropPlan BucketCropPlan(const Bucket& bucket, bool random, std::mt19937_64* rng, cv::Size full);

}  // namespace shardpack
