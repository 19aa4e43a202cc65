// The table of formats: the one place that knows which formats exist. Operations look a format up
// here by the name the user (--format) or a manifest gives, and call its Format interface.
//
// Adding a format: a folder formats/<name>/ that implements Format (formats/common/format.h), one
// line in the table in registry.cc, and its library in CMakeLists.txt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/common/format.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

// Every format, in the order help texts list them.
const std::vector<const Format*>& AllFormats();

// The format named `name` (from --format); InvalidArgument listing the known ones when none.
Status FindFormat(std::string_view name, const Format** format);

// The format of the dataset in `dir` that `manifest` describes; Unsupported naming the folder
// when this version does not know it.
Status FindFormatOf(const std::string& dir, const Manifest& manifest, const Format** format);

// The format that reads lists of shard files without a manifest (shard specs).
const Format& ShardListFormat();

// "wds, lmdb or raw": the known names, for messages.
std::string FormatNames(std::string_view last_separator = " or ");

}  // namespace shardpack
