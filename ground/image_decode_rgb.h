// Decoding to an oriented RGB cv::Mat, and decoding just a crop, shared by the raw-format transform
// and the loader.
#pragma once

#include <functional>
#include <opencv2/core.hpp>
#include <string_view>

#include "shardpack/image.h"
#include "shardpack/status.h"

namespace shardpack {

// Decodes any supported image, whole, to RGB with the EXIF orientation applied. *full_size is the
// oriented size. Refuses images over max_pixels before allocating for them. fast: JPEG with
// libjpeg-turbo's fast integer IDCT and plain chroma upsampling (values off by a level or two; fine
// for augmented training input, not for stored pixels). *rgb may point into this thread's decoder
// buffer: use it before the thread's next decode.
Status DecodeOrientedRgb(std::string_view bytes, uint64_t max_pixels, cv::Mat* rgb, cv::Size* full_size,
                         bool fast = false);

// Turns *m as stored into *m as shown, for EXIF orientation 1..8 (others: unchanged).
void ApplyOrientation(int orientation, cv::Mat* m);
// The same into *shown, which is written in place when it already has the size and type of the
// result (so it can wrap a reused buffer); orientation 1 and others copy.
void TurnUpright(int orientation, const cv::Mat& stored, cv::Mat* shown);
// The size of an image of `stored` size as shown (orientations 5-8 swap the sides).
cv::Size SizeAsShown(cv::Size stored, int orientation);
// Where box `b` of a stored image of size `stored` lies once ApplyOrientation has turned the image,
// and (BoxAsStored) where box `b` of the image as shown lies in the stored one. Sub-pixel exact.
cv::Rect2d BoxAsShown(const cv::Rect2d& b, int orientation, cv::Size stored);
cv::Rect2d BoxAsStored(const cv::Rect2d& b, int orientation, cv::Size stored);

// What a crop takes from an image: `box`, in pixels of the oriented full-size image, resized to `out`.
struct CropPlan {
  cv::Rect2d box;
  cv::Size out;
  bool reduced_dct = true;  // a JPEG may decode at 1/2, 1/4 or 1/8 scale where the box still covers out
  // Sample at the box's exact sub-pixel position (stored pixels) rather than at the box rounded to
  // whole pixels (training crops: the resize takes about half the time, and the shift is invisible).
  bool exact = false;
};
// Chooses the crop once the image's oriented full size is known (from its header). Keep captures to
// two pointers or fewer, so that std::function holds them without allocating.
using CropChooser = std::function<CropPlan(cv::Size full)>;

// Decodes what the chosen crop needs and resizes it into *dst (CV_8UC3; written in place when it
// already has plan.out's size, so it can wrap the caller's memory). A JPEG decodes only the crop's
// rows and columns, at the coarsest DCT scale at which the box still covers plan.out; one stored
// sideways (an EXIF orientation, as phones store portraits) decodes where the box lies in the
// stored image, then turns that region upright. Other images decode whole. The resize averages
// (INTER_AREA) when it shrinks by 2x or more and interpolates bilinearly otherwise (see
// CropPlan::exact). Corrupt with a reason on bad input; refuses images over max_pixels before
// allocating for them. ResizeCrop resizes plan.box of src (in src's pixels, rounded to whole pixels)
// to plan.out into *dst, as DecodeCrop does after decoding.
void ResizeCrop(const cv::Mat& src, const CropPlan& plan, cv::Mat* dst);

Status DecodeCrop(std::string_view bytes, uint64_t max_pixels, const CropChooser& choose, bool fast, cv::Mat* dst);

// DecodeAndTransform (shardpack/image.h), also giving the plan it followed and the image's oriented
// full size, so that a label mask can be cut exactly as its image was (raw packs keep masks so).
Status DecodeAndTransformPlanned(std::string_view bytes, const TransformOptions& options, DecodedImage* out,
                                 CropPlan* plan, cv::Size* full);

}  // namespace shardpack
