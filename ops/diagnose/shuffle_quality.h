// How well an epoch's order mixes the dataset, for `shardpack bench`: the mean, over the epoch's
// global batches (B consecutive samples of the order), of the total-variation distance between the
// batch's histogram of shards and the whole epoch's,
//   TV(batch) = 1/2 x sum over shards s of | batch's share of s - epoch's share of s |,
// from 0 (every batch a miniature of the epoch) to 1 (every batch from shards the rest lacks). A
// batch of B samples cannot reach 0 when the epoch has more than B shards: the value to compare with
// is the ideal, the statistic's expected value for a uniformly random order of the same epoch. A
// buffer shuffle of sorted shards shows as a value far above it.
//
// Cost follows the measurement, not the dataset: the mean is taken over the epoch's first batches,
// up to kShuffleQualitySamples samples, and the epoch's shares come from the shard sizes (and a
// mixture's quotas), so a billion-sample epoch costs what a million-sample one does, plus a few
// numbers a shard.
#pragma once

#include <cstdint>
#include <vector>

#include "shardpack/loader_bench.h"
#include "shardpack/mixture.h"
#include "shardpack/sampler.h"

namespace shardpack {

// The most samples (whole batches, at least one) the statistic reads of each order.
inline constexpr uint64_t kShuffleQualitySamples = uint64_t(1) << 20;

// The statistic over the whole batches of `order` (global indices; a partial last batch is not
// counted): shard s holds the indices [shard_starts[s], shard_starts[s + 1]) and has epoch_count[s]
// of the epoch's epoch_size samples. 0 when `order` holds no whole batch.
double MeanBatchShardDistance(const std::vector<uint64_t>& order, const std::vector<uint64_t>& shard_starts,
                              const std::vector<double>& epoch_count, uint64_t epoch_size, uint64_t batch);

// The ideal: the expected TV of a batch of `batch` samples drawn at random, without replacement, from
// an epoch of `epoch_size` samples of which shard s has epoch_count[s] (hypergeometric; the counts
// may be fractional, as a mixture's expected ones are). 0 when the epoch holds no whole batch.
double ExpectedRandomBatchDistance(const std::vector<double>& epoch_count, uint64_t epoch_size, uint64_t batch);

// The statistic for the order `options` give (and for the global shuffle, the streaming shuffle
// with each of `buffers`, and the ideal) over epoch `epoch` of one dataset (mixture null) or a
// mixture, whose sources have `shard_sizes` (Loader::source_shard_sizes). A mixture's epoch share
// of a shard is its expected one: the source's quota spread over its shards by their sizes.
Status MeasureShuffleQuality(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                             const SamplerOptions& options, const std::vector<uint64_t>& buffers, uint64_t epoch,
                             ShuffleQuality* quality);

}  // namespace shardpack
