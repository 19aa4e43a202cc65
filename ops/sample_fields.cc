#include "ops/sample_fields.h"

#include <nlohmann/json.hpp>

#include "ground/sample_keys.h"
#include "ops/source_scan.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

std::string Size(uint32_t width, uint32_t height) { return std::to_string(width) + "x" + std::to_string(height); }

}  // namespace

Status CheckSampleFields(const PackItem& item) {
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
      if (info.width != item.info.width || info.height != item.info.height) {
        return Status::Corrupt("field " + f.name + " is " + Size(info.width, info.height) + " pixels, its image " +
                               Size(item.info.width, item.info.height) + "; a mask must have its image's size");
      }
    }
  }
  return Status::OK();
}

}  // namespace shardpack
