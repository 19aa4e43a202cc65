// Early write-back: a writer that will fsync a large file before publishing it starts the disk's
// work on what it has written so far (as RocksDB's bytes_per_sync does), so that the disk writes
// while the writer goes on, and the final fsync waits for little more than the tail.
#pragma once

#include <cstdint>

namespace shardpack {

// Starts, without waiting for it, the write-back of bytes [*started, end) of the open file `fd`,
// then sets *started = end. Nothing when end <= *started. Best effort: a failure here shows up
// in the file's final fsync, which the caller does anyway.
void StartWriteBack(int fd, uint64_t end, uint64_t* started);

}  // namespace shardpack
