// Walking a source tree in ImageNet layout into the list of files to pack.
//
// Layout rules (docs/formats/source-layout.md):
//  - Each non-hidden first-level folder of SRC is a class; label = position of its name in sorted
//    (byte-wise) order. Files inside a class folder are found recursively.
//  - A SRC without class folders is unlabelled: its first-level files are packed with label -1.
//  - A file lying directly in a SRC that has class folders has no class: reported and skipped.
//  - Hidden entries (name starting with '.') are ignored; names that are not valid UTF-8 are
//    reported and skipped; symlinks are followed, but a folder already on the current path (a loop)
//    is reported and not entered.
// The result is deterministic: entries are visited in sorted order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

struct SourceFile {
  std::string relpath;  // relative to SRC, '/'-separated
  int32_t label = -1;   // index into SourceTree::class_names, -1 when unlabelled
};

struct SourceTree {
  std::vector<std::string> class_names;
  std::vector<SourceFile> files;
  std::vector<SkippedFile> skipped;
  std::vector<std::string> empty_classes;  // classes with no files; they keep their label
};

Status ScanSourceTree(Env* env, const std::string& root, SourceTree* tree);

// True when `s` is well-formed UTF-8.
bool IsValidUtf8(const std::string& s);
// `s` with every byte that is not part of valid UTF-8 written as \xNN, for reports.
std::string EscapeInvalidUtf8(const std::string& s);

}  // namespace shardpack
