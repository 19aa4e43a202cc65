#include "ops/diagnose/shuffle_quality.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace shardpack {

namespace {

// The first `samples` positions of epoch `epoch`'s order with `options` (one dataset, whose size is
// sizes[0], or a mixture of sources of `sizes`), asked for by position: the order is never made
// whole (8 bytes a sample: 8 GB for a billion).
Status OrderWindow(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                   const std::vector<uint64_t>& sizes, const SamplerOptions& options, uint64_t epoch, uint64_t samples,
                   std::vector<uint64_t>* order) {
  order->clear();
  order->reserve(samples);
  if (mixture != nullptr) {
    MixturePlan plan;
    SHARDPACK_RETURN_IF_ERROR(MixturePlan::Create(*mixture, sizes, shard_sizes, options, &plan));
    plan.NewOrder(epoch)->Fill(0, samples, order);
    return Status::OK();
  }
  EpochSampler sampler;
  SamplerOptions one = options;
  one.rank = 0, one.world_size = 1, one.worker = 0, one.num_workers = 1, one.drop_last = true;
  SHARDPACK_RETURN_IF_ERROR(EpochSampler::Create(sizes.at(0), one, &sampler, shard_sizes.at(0)));
  sampler.NewOrder(epoch)->Fill(0, samples, order);
  return Status::OK();
}

// E|X/B - c/E| for X ~ Hypergeometric(E samples, c of them the shard's, B drawn), c possibly
// fractional. The pmf's weights are built outwards from the mode by the ratio of neighbours,
//   P(x+1) / P(x) = (c - x)(B - x) / ((x + 1)(E - c - B + x + 1)),
// so that nothing overflows: the weights fall away from the mode (1), and those that underflow
// are 0 and end their side. x runs over [max(0, B - (E - c)), min(B, c)].
double ExpectedShareError(double c, double e, double b) {
  const double lo = std::max(0.0, std::ceil(b - (e - c))), hi = std::min(b, std::floor(c));
  const double share = c / e;
  if (hi < lo) return share;  // not reached for counts within the epoch
  const double mode = std::clamp(std::floor((b + 1) * (c + 1) / (e + 2)), lo, hi);
  double total = 1, sum = std::abs(mode / b - share);
  double w = 1;
  for (double x = mode; x < hi && w > 0; ++x) {
    w *= (c - x) * (b - x) / ((x + 1) * (e - c - b + x + 1));
    total += w, sum += w * std::abs((x + 1) / b - share);
  }
  w = 1;
  for (double x = mode; x > lo && w > 0; --x) {
    w *= x * (e - c - b + x) / ((c - x + 1) * (b - x + 1));
    total += w, sum += w * std::abs((x - 1) / b - share);
  }
  return sum / total;
}

}  // namespace

double MeanBatchShardDistance(const std::vector<uint64_t>& order, const std::vector<uint64_t>& shard_starts,
                              const std::vector<double>& epoch_count, uint64_t epoch_size, uint64_t batch) {
  std::vector<uint64_t> count(epoch_count.size(), 0);
  std::vector<size_t> seen;
  double sum = 0;
  uint64_t batches = 0;
  for (uint64_t begin = 0; batch > 0 && begin + batch <= order.size(); begin += batch, ++batches) {
    seen.clear();
    for (uint64_t p = begin; p < begin + batch; ++p) {
      const size_t s =
          size_t(std::upper_bound(shard_starts.begin(), shard_starts.end(), order[p]) - shard_starts.begin() - 1);
      if (count[s]++ == 0) seen.push_back(s);
    }
    // Shards the batch lacks contribute their epoch share: 1 - (the shares of those it has).
    double tv = 1;
    for (const size_t s : seen) {
      const double share = epoch_count[s] / double(epoch_size);
      tv += std::abs(double(count[s]) / double(batch) - share) - share;
      count[s] = 0;
    }
    sum += tv / 2;
  }
  return batches == 0 ? 0 : sum / double(batches);
}

double ExpectedRandomBatchDistance(const std::vector<double>& epoch_count, uint64_t epoch_size, uint64_t batch) {
  if (batch == 0 || epoch_size < batch) return 0;
  std::map<double, double> by_count;  // shards of one size share their term
  double sum = 0;
  for (const double c : epoch_count) {
    if (c <= 0) continue;  // never in a batch: |0 - 0|
    auto [it, fresh] = by_count.try_emplace(c, 0.0);
    if (fresh) it->second = ExpectedShareError(c, double(epoch_size), double(batch));
    sum += it->second;
  }
  return sum / 2;
}

Status MeasureShuffleQuality(const Mixture* mixture, const std::vector<std::vector<uint64_t>>& shard_sizes,
                             const SamplerOptions& options, const std::vector<uint64_t>& buffers, uint64_t epoch,
                             ShuffleQuality* quality) {
  *quality = ShuffleQuality();
  // Shard s (all sources', source after source) holds the global indices [starts[s], starts[s + 1]).
  std::vector<uint64_t> sizes, starts = {0};
  for (const std::vector<uint64_t>& source : shard_sizes) {
    sizes.push_back(0);
    for (const uint64_t samples : source) {
      sizes.back() += samples;
      starts.push_back(starts.back() + samples);
    }
  }
  quality->shards = starts.size() - 1;
  // Each shard's samples in the epoch: a dataset's, all of them; a mixture's, the share of its
  // source's quota its size gives it (the expected count; exact when the quota is whole passes).
  std::vector<double> counts(quality->shards);
  uint64_t epoch_size = sizes.empty() ? 0 : sizes[0];
  if (mixture != nullptr) {
    MixturePlan plan;
    SHARDPACK_RETURN_IF_ERROR(MixturePlan::Create(*mixture, sizes, shard_sizes, options, &plan));
    epoch_size = plan.epoch_size();
    size_t s = 0;
    for (size_t i = 0; i < shard_sizes.size(); ++i) {
      for (const uint64_t samples : shard_sizes[i])
        counts[s++] = double(plan.quotas()[i]) * double(samples) / double(sizes[i]);
    }
  } else {
    for (size_t s = 0; s < counts.size(); ++s) counts[s] = double(starts[s + 1] - starts[s]);
  }
  const uint64_t b = options.batch_size;
  if (b == 0) return Status::OK();
  quality->batches = std::min(epoch_size / b, std::max<uint64_t>(1, kShuffleQualitySamples / b));
  const auto measure = [&](const SamplerOptions& o, double* value) {
    std::vector<uint64_t> order;
    SHARDPACK_RETURN_IF_ERROR(OrderWindow(mixture, shard_sizes, sizes, o, epoch, quality->batches * b, &order));
    *value = MeanBatchShardDistance(order, starts, counts, epoch_size, b);
    return Status::OK();
  };
  SHARDPACK_RETURN_IF_ERROR(measure(options, &quality->loader));
  quality->ideal = ExpectedRandomBatchDistance(counts, epoch_size, b);
  SamplerOptions variant = options;
  variant.shuffle = true;
  variant.shuffle_buffer = 0;
  SHARDPACK_RETURN_IF_ERROR(measure(variant, &quality->global));
  for (const uint64_t k : buffers) {
    variant.shuffle_buffer = k;
    quality->buffers.push_back({k, 0});
    SHARDPACK_RETURN_IF_ERROR(measure(variant, &quality->buffers.back().second));
  }
  return Status::OK();
}

}  // namespace shardpack
