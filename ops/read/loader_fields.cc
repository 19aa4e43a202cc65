#include "ops/read/loader_fields.h"

#include <map>

namespace shardpack {

std::string FieldsMissingFor(const CompactManifest& manifest, const LoaderOptions& options) {
  if (manifest.tool_version.empty()) return "";
  const std::map<std::string, uint64_t>& fields = manifest.field_counts;
  std::string present;
  for (const auto& [name, count] : fields) present += (present.empty() ? "" : ", ") + name;
  const std::string held = " (its samples' fields: " + (present.empty() ? std::string("none") : present) + ")";
  if (!options.mask.empty() && fields.count(options.mask) == 0) {
    return "has no mask field '" + options.mask + "'" + held + ", which the loader's mask option asks of every sample";
  }
  for (const std::string& field : options.fields) {
    if (options.require_fields && fields.count(field) == 0) {
      return "has no field '" + field + "'" + held + ", which require_fields asks of every sample";
    }
  }
  return "";
}

}  // namespace shardpack
