// The table of formats: the one place that knows which implementations exist. Operations look a
// format up here by the DatasetFormat the user (--format) or a manifest gives, and call its Format
// interface.
//
// Adding a format: a folder formats/<name>/ that implements Format (formats/common/format.h), one
// line in the table in registry.cc, its value and name in shardpack/dataset_format.h and
// ground/dataset_format.cc, and its library in CMakeLists.txt.
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

// The implementation of `id`; InvalidArgument when the table has none (a value outside the enum).
Status FindFormat(DatasetFormat id, const Format** format);

// The format of the dataset in `dir` that `manifest` describes; Unsupported naming the folder
// when the table has no implementation of it.
Status FindFormatOf(const std::string& dir, const Manifest& manifest, const Format** format);

// The samples of `path`, a file or folder without a manifest (shards or records other tools
// wrote), as a convert input: TFRecord files (formats/tfrecord/), else the first format that
// recognises them (WebDataset tars). NotFound when nothing does.
Status OpenForeignInput(Env* env, const std::string& path, uint64_t max_member_bytes,
                        std::unique_ptr<PackInput>* input);

// A dataset that another tool wrote with an index of its own (MosaicML Streaming's MDS, LitData:
// index.json; Parquet files: their footers), read in place: the manifest shardpack's operations take
// it by (never written into the folder) and its format. NotFound when `dir` (a folder; for Parquet
// also a file or a glob) holds no such dataset.
Status OpenForeignDataset(Env* env, const std::string& dir, Manifest* manifest, const Format** format);

// The format that reads lists of shard files without a manifest (shard specs).
const Format& ShardListFormat();

}  // namespace shardpack
