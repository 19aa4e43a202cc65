// How well an epoch's order mixes the dataset, for `shardpack bench`: the mean, over the epoch's
// global batches (B consecutive samples of the order), of the total-variation distance between the
// batch's histogram of shards and the whole epoch's,
//   TV(batch) = 1/2 x sum over shards s of | batch's share of s - epoch's share of s |,
// from 0 (every batch a miniature of the epoch) to 1 (every batch from shards the rest lacks). A
// batch of B samples cannot reach 0 when the epoch has more than B shards: the value to compare with
// is the ideal, the same statistic over a uniformly random order of the same epoch. A buffer
// shuffle of sorted shards shows as a value far above it.
#pragma once

#include <cstdint>
#include <vector>

#include "shardpack/loader_bench.h"
#include "shardpack/mixture.h"
#include "shardpack/sampler.h"

namespace shardpack {

// The statistic for `order` (global indices), `shard_of` mapping an index to its shard.
double MeanBatchShardDistance(const std::vector<uint64_t>& order, const std::vector<uint32_t>& shard_of,
                              uint64_t batch);

// The statistic for the order `options` give (and for the global shuffle, the streaming shuffle
// with each of `buffers`, and the ideal) over epoch `epoch` of one dataset (mixture null) or a
// mixture, whose sources have `shard_sizes` (Loader::source_shard_sizes).
Status MeasureShuffleQuality(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                             const SamplerOptions& options, const std::vector<uint64_t>& buffers, uint64_t epoch,
                             ShuffleQuality* quality);

}  // namespace shardpack
