#include "shardpack/sampler.h"

#include <numeric>
#include <random>

namespace shardpack {

Status EpochSampler::Create(uint64_t dataset_size, const SamplerOptions& o, EpochSampler* sampler) {
  if (o.batch_size == 0) return Status::InvalidArgument("batch size must be at least 1");
  if (o.world_size == 0 || o.rank >= o.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(o.rank) + " is not below world size " +
                                   std::to_string(o.world_size));
  }
  if (o.num_workers == 0 || o.worker >= o.num_workers) {
    return Status::InvalidArgument("worker " + std::to_string(o.worker) + " is not below num_workers " +
                                   std::to_string(o.num_workers));
  }
  if (!o.drop_last && dataset_size < o.world_size) {
    return Status::InvalidArgument("a dataset of " + std::to_string(dataset_size) + " samples cannot give each of " +
                                   std::to_string(o.world_size) + " ranks a batch; use drop_last or fewer ranks");
  }
  sampler->size_ = dataset_size;
  sampler->options_ = o;
  const uint64_t per_round = o.batch_size * o.world_size;  // samples in one batch of every rank
  sampler->rank_batches_ = o.drop_last ? dataset_size / per_round : (dataset_size + per_round - 1) / per_round;
  sampler->tail_rounds_ = 0;
  if (!o.drop_last) {
    // The fewest final rounds whose samples give every batch in them at least one sample.
    for (uint64_t k = 1; k <= sampler->rank_batches_; ++k) {
      if (dataset_size - (sampler->rank_batches_ - k) * per_round >= k * o.world_size) {
        sampler->tail_rounds_ = k;
        break;
      }
    }
    if (sampler->tail_rounds_ == 0) {
      return Status::InvalidArgument("a dataset of " + std::to_string(dataset_size) + " samples cannot give each of " +
                                     std::to_string(o.world_size) + " ranks the same number of batches of " +
                                     std::to_string(o.batch_size) + "; use drop_last or another batch size");
    }
  }
  return Status::OK();
}

uint64_t EpochSampler::worker_batches() const {
  const uint64_t w = options_.num_workers;
  return rank_batches_ / w + (options_.worker < rank_batches_ % w ? 1 : 0);
}

std::vector<uint64_t> EpochSampler::Permutation(uint64_t epoch) const {
  std::vector<uint64_t> order(size_);
  std::iota(order.begin(), order.end(), uint64_t(0));
  if (!options_.shuffle) return order;
  // Seed from (seed, epoch) through splitmix64, so neighbouring seeds and epochs are unrelated.
  uint64_t z = options_.seed + 0x9E3779B97F4A7C15ull * (epoch + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  std::mt19937_64 rng(z ^ (z >> 31));
  for (uint64_t i = size_; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

void EpochSampler::Batch(uint64_t epoch, uint64_t b, std::vector<uint64_t>* indices) {
  const SamplerOptions& o = options_;
  const uint64_t rank_batch = b * o.num_workers + o.worker;  // this batch's number within the rank
  if (cached_order_.size() != size_ || cached_epoch_ != epoch) {
    cached_order_ = Permutation(epoch);
    cached_epoch_ = epoch;
  }
  const std::vector<uint64_t>& order = cached_order_;
  const uint64_t full_rounds = rank_batches_ - tail_rounds_;
  uint64_t begin, end;
  if (rank_batch < full_rounds) {
    const uint64_t g = rank_batch * o.world_size + o.rank;
    begin = g * o.batch_size;
    end = begin + o.batch_size;
  } else {
    // The tail rounds: the samples left after the full rounds, shared evenly by their batches.
    const uint64_t start = full_rounds * o.world_size * o.batch_size;
    const uint64_t slots = tail_rounds_ * o.world_size;
    const uint64_t slot = (rank_batch - full_rounds) * o.world_size + o.rank;
    const uint64_t rest = size_ - start;
    const uint64_t base = rest / slots, extra = rest % slots;
    begin = start + slot * base + std::min<uint64_t>(slot, extra);
    end = begin + base + (slot < extra ? 1 : 0);
  }
  indices->assign(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace shardpack
