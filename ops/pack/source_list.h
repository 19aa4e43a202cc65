// Reading the files to pack from a list instead of a folder tree (`pack --list FILE`), for datasets
// whose labels live outside the folder structure (ImageNet's validation set, most detection sets).
//
// Formats (docs/formats/source-layout.md#lists):
//  - UTF-8 text, one "relative_path<TAB>label" a line. Blank lines and lines starting with '#' are
//    ignored.
//  - A table of samples, as img2dataset's inputs look: JSON Lines (".jsonl", ".ndjson"; one object
//    a sample), CSV (".csv") or TSV (".tsv" whose first line names a column "image" or "path") with
//    a header row. The key or column "image" (or "path") is the image; "cls" (or "label") the label;
//    every other one a field of the sample, whose bytes are the string as written (JSON: other
//    values as their JSON text). An empty CSV cell or a JSON null is no value.
// Paths are relative to SRC and must not contain ".." components. Labels are either all integers
// (used as they are; -1 means unlabelled) or all class names (label = position of the name in the
// sorted set of names). Files keep the list's order.
#pragma once

#include <string>

#include "ops/pack/source_scan.h"
#include "shardpack/env.h"

namespace shardpack {

// InvalidArgument naming the list file and line for malformed lines; missing or unreadable files
// are not detected here (pack reports them as skips when it reads them).
Status ReadSourceList(Env* env, const std::string& list_path, SourceTree* tree);

}  // namespace shardpack
