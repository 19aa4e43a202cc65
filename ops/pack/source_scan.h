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
// Files of one folder whose names share the part before the first dot form one sample
// (WebDataset's rule): the member whose remaining name is an image extension (jpg, jpeg, png,
// webp, bmp, any case) is its image, and the others are its fields, named by that remaining name
// ("0001.txt" is field "txt", "0001.seg.png" field "seg.png").
//  - imagenet layout: a group with exactly one image joins its other files as fields; any other
//    group (no image, or several) stays one sample per file, as when there were no fields.
//  - samples layout: SRC has no class folders; every folder, at any depth, holds samples. A group
//    without an image is reported and skipped; of several images, the first in name order is the
//    image and the others are reported.
// Field names that cannot be stored (FieldNameProblem, "cls" beside a class folder's image,
// "meta.json") are reported and their files skipped.
// The result is deterministic: entries are visited in sorted order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"

namespace shardpack {

struct SourceField {
  std::string name;     // "txt", "seg.png"
  std::string relpath;  // of its file; empty when the value is inline
  std::string value;    // a value given in a --list table (a caption, a JSON text)
};

struct SourceFile {
  std::string relpath;              // of the image, relative to SRC, '/'-separated
  int32_t label = -1;               // index into SourceTree::class_names, -1 when unlabelled
  std::vector<SourceField> fields;  // the sample's other files, sorted by name
};

struct SourceTree {
  std::vector<std::string> class_names;
  std::vector<SourceFile> files;
  std::vector<SkippedFile> skipped;
  std::vector<std::string> empty_classes;  // classes with no files; they keep their label
};

Status ScanSourceTree(Env* env, const std::string& root, SourceLayout layout, SourceTree* tree);

// True when `s` is well-formed UTF-8.
bool IsValidUtf8(const std::string& s);
// `s` with every byte that is not part of valid UTF-8 written as \xNN, for reports.
std::string EscapeInvalidUtf8(const std::string& s);

}  // namespace shardpack
