#include "formats/common/sample_metadata.h"

namespace shardpack {

nlohmann::json SampleMetadata(const Sample& sample) {
  nlohmann::json meta = {{"path", sample.relpath},
                         {"width", sample.image.width},
                         {"height", sample.image.height},
                         {"format", ImageFormatName(sample.image.format)}};
  if (sample.original.width > 0) {  // re-encoded under a resolution bound: the size it had
    meta["original_width"] = sample.original.width;
    meta["original_height"] = sample.original.height;
  }
  if (sample.orientation != 1) meta["orientation"] = sample.orientation;  // EXIF: shown turned or mirrored
  meta["class"] = sample.class_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(sample.class_name);
  if (sample.extra != nullptr) meta["source"] = *sample.extra;
  return meta;
}

}  // namespace shardpack
