// Reading the files to pack from a list instead of a folder tree (`pack --list FILE`), for datasets
// whose labels live outside the folder structure (ImageNet's validation set, most detection sets).
//
// Format: UTF-8 text, one "relative_path<TAB>label" a line, paths relative to SRC. Blank lines and
// lines starting with '#' are ignored. Labels are either all integers (used as they are; -1 means
// unlabelled) or all class names (label = position of the name in the sorted set of names). Paths
// must be relative and must not contain ".." components. Files keep the list's order.
#pragma once

#include <string>

#include "ops/source_scan.h"
#include "shardpack/env.h"

namespace shardpack {

// InvalidArgument naming the list file and line for malformed lines; missing or unreadable files
// are not detected here (pack reports them as skips when it reads them).
Status ReadSourceList(Env* env, const std::string& list_path, SourceTree* tree);

}  // namespace shardpack
