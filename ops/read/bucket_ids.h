// Each sample's aspect-ratio bucket, from its size as shown (EXIF orientation applied) as the
// dataset's sample tables, or the LMDB and raw records, give it: what the bucketed loader plans its
// epochs with (ops/read/bucket_sampler.h). No image is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/buckets.h"
#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// The most buckets a loader takes: a bucket is kept in a byte a sample.
inline constexpr size_t kMaxLoaderBuckets = 255;

// Appends the bucket (its place in `buckets`) of every sample of the dataset at `location`, in
// dataset order, to *ids: one shard's table at a time. InvalidArgument naming the sample and the
// command that records sizes when a sample's size is unknown (shards written by another tool), and
// naming `location` for a shard list, which has no sample tables.
Status ReadBucketIds(const std::string& location, const std::vector<Bucket>& buckets, const RemoteOptions& remote,
                     Env* env, std::vector<uint8_t>* ids);

}  // namespace shardpack
