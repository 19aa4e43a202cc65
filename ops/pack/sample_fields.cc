#include "ops/pack/sample_fields.h"

#include <nlohmann/json.hpp>

#include "ground/sample_keys.h"
#include "ops/pack/source_scan.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

std::string Size(uint32_t width, uint32_t height) { return std::to_string(width) + "x" + std::to_string(height); }

}  // namespace

Status CheckSampleFields(const PackItem& item) {
  // A mask is drawn on the image as it is shown: on a camera's JPEG, after its EXIF orientation,
  // which for 5..8 swaps width and height. The loader and the raw pack cut it on that size too.
  const bool turned = item.info.format == ImageFormat::kJpeg && JpegExifOrientation(item.bytes) >= 5;
  const uint32_t width = turned ? item.info.height : item.info.width;
  const uint32_t height = turned ? item.info.width : item.info.height;
  for (const SampleField& f : item.fields) {
    const std::string kind = FieldKind(f.name);
    if (kind == "txt" && !IsValidUtf8(f.data)) {
      return Status::Corrupt("field " + f.name + " is not valid UTF-8 text");
    }
    if (kind == "json" && !nlohmann::json::accept(f.data)) {
      return Status::Corrupt("field " + f.name + " is not valid JSON");
    }
    if (IsImageFieldKind(kind)) {
      ImageInfo info;
      const Status s = ProbeImage(f.data, &info);
      if (!s.ok()) return Status::Corrupt("field " + f.name + " is not a readable image: " + s.message());
      if (info.width != width || info.height != height) {
        return Status::Corrupt("field " + f.name + " is " + Size(info.width, info.height) + " pixels, its image " +
                               Size(width, height) + (turned ? " after its EXIF orientation" : "") +
                               "; a mask must have its image's size");
      }
    }
  }
  return Status::OK();
}

}  // namespace shardpack
