// Publishing a small file next to a shard (an index, a sample table, labels): written whole under a
// temporary name, synced when asked, renamed into place, and described with its checksum.
#pragma once

#include <string>

#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

Status PublishSideFile(Env* env, const std::string& dir, const std::string& file, const std::string& contents,
                       bool sync, SideFile* entry);

}  // namespace shardpack
