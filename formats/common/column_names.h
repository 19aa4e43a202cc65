// The column names that mark an image and a label in other tools' tables (MDS columns, Parquet
// columns) when nothing else says which is which.
#pragma once

#include <string_view>

namespace shardpack {

// image, img, jpg, jpeg, png, webp.
bool IsImageColumnName(std::string_view name);
// label, labels, class, cls, target, y.
bool IsLabelColumnName(std::string_view name);

}  // namespace shardpack
