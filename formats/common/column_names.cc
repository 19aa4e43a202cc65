#include "formats/common/column_names.h"

namespace shardpack {

bool IsImageColumnName(std::string_view name) {
  for (const char* n : {"image", "img", "jpg", "jpeg", "png", "webp"}) {
    if (name == n) return true;
  }
  return false;
}

bool IsLabelColumnName(std::string_view name) {
  for (const char* n : {"label", "labels", "class", "cls", "target", "y"}) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace shardpack
