#include "ops/diagnose/shuffle_quality.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace shardpack {

namespace {

// The whole epoch's order with `options` (one dataset or a mixture).
Status WholeEpochOrder(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                       const SamplerOptions& options, uint64_t epoch, std::vector<uint64_t>* order) {
  if (mixture != nullptr) {
    std::vector<uint64_t> sizes;
    for (const std::vector<uint64_t>& s : shard_sizes)
      sizes.push_back(std::accumulate(s.begin(), s.end(), uint64_t(0)));
    MixturePlan plan;
    SHARDPACK_RETURN_IF_ERROR(MixturePlan::Create(*mixture, sizes, shard_sizes, options, &plan));
    *order = plan.Order(epoch);
    return Status::OK();
  }
  const std::vector<uint64_t>& shards = shard_sizes.at(0);
  EpochSampler sampler;
  SamplerOptions one = options;
  one.rank = 0, one.world_size = 1, one.worker = 0, one.num_workers = 1, one.drop_last = true;
  SHARDPACK_RETURN_IF_ERROR(
      EpochSampler::Create(std::accumulate(shards.begin(), shards.end(), uint64_t(0)), one, &sampler, shards));
  *order = sampler.Permutation(epoch);
  return Status::OK();
}

}  // namespace

double MeanBatchShardDistance(const std::vector<uint64_t>& order, const std::vector<uint32_t>& shard_of,
                              uint64_t batch) {
  const uint32_t shards = shard_of.empty() ? 0 : *std::max_element(shard_of.begin(), shard_of.end()) + 1;
  std::vector<double> epoch_share(shards, 0);
  for (const uint64_t index : order) epoch_share[shard_of[index]] += 1.0 / double(order.size());
  std::vector<uint64_t> count(shards, 0);
  std::vector<uint32_t> seen;
  double sum = 0;
  uint64_t batches = 0;
  for (uint64_t begin = 0; begin + batch <= order.size(); begin += batch, ++batches) {
    seen.clear();
    for (uint64_t p = begin; p < begin + batch; ++p) {
      const uint32_t s = shard_of[order[p]];
      if (count[s]++ == 0) seen.push_back(s);
    }
    // Shards the batch lacks contribute their epoch share: 1 - (the shares of those it has).
    double tv = 1;
    for (const uint32_t s : seen) {
      tv += std::abs(double(count[s]) / double(batch) - epoch_share[s]) - epoch_share[s];
      count[s] = 0;
    }
    sum += tv / 2;
  }
  return batches == 0 ? 0 : sum / double(batches);
}

Status MeasureShuffleQuality(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                             const SamplerOptions& options, const std::vector<uint64_t>& buffers, uint64_t epoch,
                             ShuffleQuality* quality) {
  *quality = ShuffleQuality();
  std::vector<uint32_t> shard_of;
  for (const std::vector<uint64_t>& source : shard_sizes) {
    for (const uint64_t samples : source) shard_of.insert(shard_of.end(), samples, quality->shards++);
  }
  const uint64_t b = options.batch_size;
  std::vector<uint64_t> order;
  SHARDPACK_RETURN_IF_ERROR(WholeEpochOrder(mixture, shard_sizes, options, epoch, &order));
  quality->loader = MeanBatchShardDistance(order, shard_of, b);
  // The ideal: the same epoch (the same samples, as often) in a uniformly random order.
  std::mt19937_64 rng(options.seed ^ 0x4944454Full);  // "IDEO"
  for (uint64_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  quality->ideal = MeanBatchShardDistance(order, shard_of, b);
  SamplerOptions variant = options;
  variant.shuffle = true;
  variant.shuffle_buffer = 0;
  SHARDPACK_RETURN_IF_ERROR(WholeEpochOrder(mixture, shard_sizes, variant, epoch, &order));
  quality->global = MeanBatchShardDistance(order, shard_of, b);
  for (const uint64_t k : buffers) {
    variant.shuffle_buffer = k;
    SHARDPACK_RETURN_IF_ERROR(WholeEpochOrder(mixture, shard_sizes, variant, epoch, &order));
    quality->buffers.push_back({k, MeanBatchShardDistance(order, shard_of, b)});
  }
  return Status::OK();
}

}  // namespace shardpack
