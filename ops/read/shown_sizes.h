// Each sample's image size as shown (EXIF orientation applied), as the dataset's sample tables, or
// the LMDB and raw records, give it: what the loader plans aspect-ratio buckets and token budgets
// with (ops/read/grouped_batch_sampler.h). No image is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// Calls add(width, height) for every sample of the dataset at `location`, in dataset order, one
// shard's table at a time, the tables read on `threads` threads (0: every core). InvalidArgument
// naming the sample and the command that records sizes when a sample's size is unknown (shards
// written by another tool), and naming `location` for a shard list, which has no sample tables;
// DataLoss when the tables and the manifest disagree.
Status ForEachShownSize(const std::string& location, const RemoteOptions& remote, Env* env, int threads,
                        const std::function<void(uint32_t width, uint32_t height)>& add);

}  // namespace shardpack
