// A RandomAccessFile over bytes in memory: a shard streamed over the network (streaming mode of
// remote datasets), or a small file fetched with it, read as a file is.
#pragma once

#include <memory>
#include <string>

#include "ground/shard_buffer.h"
#include "shardpack/env.h"

namespace shardpack {

// `name` is what errors call the file (its URL). The file shares `bytes`, so that their owner can
// take the buffer back for another file once the file is gone (use_count() == 1).
std::unique_ptr<RandomAccessFile> NewMemoryFile(std::shared_ptr<const ShardBuffer> bytes, std::string name);
std::unique_ptr<RandomAccessFile> NewMemoryFile(std::string bytes, std::string name);

// `file`, of `size` bytes, read front to back (a file in memory handed to code that reads
// sequentially).
std::unique_ptr<SequentialFile> NewSequentialOverRandom(std::unique_ptr<RandomAccessFile> file, uint64_t size);

}  // namespace shardpack
