// Each sample's image size as shown (EXIF orientation applied), as the dataset's sample tables, or
// the LMDB and raw records, give it: what the loader plans aspect-ratio buckets and token budgets
// with (ops/read/grouped_batch_sampler.h). No image is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// The group of every sample of the dataset at `location` (its bucket, its patch grid): group(width,
// height) is called on the `threads` threads (0: every core) that read the tables, so it must be
// safe to call from several at once, and add(groups) gets each shard's groups, shard after shard in
// dataset order, on one thread at a time. InvalidArgument naming the sample and the command that
// records sizes when a sample's size is unknown (shards written by another tool), and naming
// `location` for a shard list, which has no sample tables; DataLoss when the tables and the
// manifest disagree.
Status GroupShownSizes(const std::string& location, const RemoteOptions& remote, Env* env, int threads,
                       const std::function<uint32_t(uint32_t width, uint32_t height)>& group,
                       const std::function<void(const std::vector<uint32_t>& groups)>& add);

}  // namespace shardpack
