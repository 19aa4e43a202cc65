// Publishing a small file next to a shard (an index, a sample table, labels): written whole under a
// temporary name, synced when asked, renamed into place, and described with its checksum.
#pragma once

#include <string>
#include <string_view>

#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

Status PublishSideFile(Env* env, const std::string& dir, const std::string& file, const std::string& contents,
                       bool sync, SideFile* entry);

// Reads the side file `entry` describes and checks it against the checksum the manifest lists.
// Readers take offsets and sizes from side files, so a changed one must never get through: DataLoss
// naming the file otherwise. Side files are small (an index, a table): at most 4 GiB is read.
Status ReadSideFile(Env* env, const std::string& dir, const SideFile& entry, std::string* contents);

// The check ReadSideFile makes, of `contents` read from `path` some other way.
Status CheckSideFile(const std::string& path, const SideFile& entry, std::string_view contents);

}  // namespace shardpack
