// The WebDataset naming rules every reader of tar shards applies, in one place.
//
// A member "dir/n0123_45.cls" belongs to the sample whose key is "dir/n0123_45" and is that
// sample's "cls" field: the key ends at the first '.' of the base name. The members of a sample are
// adjacent in the tar.
#pragma once

#include <string>

#include "shardpack/image.h"

namespace shardpack {

// shardpack's per-sample metadata is the member "<key>.json", or "<key>.meta.json" in a sample
// whose own files include a "json" field (annotations): a reader that finds "meta.json" takes the
// metadata from it and "json" as the sample's field.
inline constexpr const char* kWdsMetaJsonField = "meta.json";

// The key and extension of a member name. False when the base name has no '.' or starts with one
// (hidden files, which WebDataset readers ignore).
bool SplitWdsMemberName(const std::string& name, std::string* key, std::string* ext);

// A field extension in lower case: readers match fields in any case ("JPG", "Cls").
std::string LowerExtension(std::string ext);

// The image format a field extension stands for, in any case ("JPG", "jpeg", "png", "webp", "bmp");
// kUnknown for other fields.
ImageFormat WdsImageFormat(const std::string& ext);

// Absolute paths and ".." components: a reader that extracts such a member could write outside
// its target folder, so every reader refuses them.
bool IsUnsafeMemberName(const std::string& name);

// The label a ".cls" field holds: a decimal integer, surrounding whitespace allowed. False otherwise.
bool ParseClsField(const std::string& data, int32_t* label);

}  // namespace shardpack
