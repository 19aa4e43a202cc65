// The views' one way to work through shards in parallel (making a view, refreshing one): a task a
// shard on the operation's worker threads, progress after each, and the first error returned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "shardpack/status.h"

namespace shardpack {

// Runs task(i) for every i in [first, last) on `threads` worker threads (0: every core), calling
// on_shard(done, last - first) after each (one call at a time; may be empty). Returns the first
// error in index order; an exception a task throws is one ("`what` failed: ..."), never escaping.
Status ForEachShardTask(size_t first, size_t last, int threads, const char* what,
                        const std::function<void(uint64_t done, uint64_t total)>& on_shard,
                        const std::function<Status(size_t)>& task);

}  // namespace shardpack
