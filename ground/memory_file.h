// A RandomAccessFile over bytes in memory: a shard streamed over the network (streaming mode of
// remote datasets), read as a file is.
#pragma once

#include <memory>
#include <string>

#include "shardpack/env.h"

namespace shardpack {

// `name` is what errors call the file (its URL).
std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name);

}  // namespace shardpack
