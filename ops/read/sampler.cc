#include "shardpack/sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "ops/read/keyed_permutation.h"
#include "shardpack/mixture.h"

namespace shardpack {

namespace {

// The epoch's generator, for the orders drawn as a stream (the streaming shuffle, the shard order).
std::mt19937_64 EpochRng(uint64_t seed, uint64_t epoch) { return std::mt19937_64(EpochKey(seed, epoch)); }

// Fisher-Yates with mt19937_64, whose output the standard fixes (std::shuffle's is not).
void Shuffle(std::vector<uint64_t>& v, std::mt19937_64& rng) {
  for (uint64_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

// No shuffle: position p holds sample p.
class IdentityOrder final : public EpochOrder {
 public:
  void Fill(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) override {
    for (uint64_t p = begin; p < end; ++p) out->push_back(p);
  }
};

// The global shuffle: each position on its own.
class KeyedShuffleOrder final : public EpochOrder {
 public:
  explicit KeyedShuffleOrder(KeyedPermutation permutation) : permutation_(permutation) {}
  void Fill(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) override {
    for (uint64_t p = begin; p < end; ++p) out->push_back(permutation_(p));
  }

 private:
  KeyedPermutation permutation_;
};

// The streaming shuffle as a stream: the shards in `shard_order`, each front to back, through a
// buffer of k samples; while the stream lasts, each sample that enters once the buffer is full
// takes the place of one drawn at random, which is the next output; when the stream ends, the
// buffer is shuffled and emptied in order. (The order of versions 1 and 2 alike.) Keeps the
// buffer, the shard order and where the stream is: memory in k, and 4 bytes a shard (the shards'
// places are the sampler's, shared).
class StreamingShuffleOrder final : public EpochOrder {
 public:
  StreamingShuffleOrder(std::shared_ptr<const std::vector<uint64_t>> shard_starts,
                        const std::vector<uint64_t>& shard_order, uint64_t k, std::mt19937_64 rng)
      : starts_(std::move(shard_starts)),
        shard_order_(shard_order.begin(), shard_order.end()),  // (a shard number fits 32 bits: ShardUse)
        k_(k),
        start_rng_(rng) {
    Restart();
  }

  void Fill(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) override {
    if (begin < produced_) Restart();
    while (produced_ < begin) Next();
    while (produced_ < end) out->push_back(Next());
  }

 private:
  void Restart() {
    rng_ = start_rng_;
    buffer_.clear();
    next_shard_ = 0, next_in_shard_ = 0, produced_ = 0, drained_ = false;
  }

  // The stream's next sample, or false when it has ended.
  bool NextInStream(uint64_t* index) {
    const std::vector<uint64_t>& starts = *starts_;
    while (next_shard_ < shard_order_.size() &&
           next_in_shard_ == starts[shard_order_[next_shard_] + 1] - starts[shard_order_[next_shard_]]) {
      ++next_shard_, next_in_shard_ = 0;
    }
    if (next_shard_ == shard_order_.size()) return false;
    *index = starts[shard_order_[next_shard_]] + next_in_shard_++;
    return true;
  }

  uint64_t Next() {
    ++produced_;
    if (!drained_) {
      uint64_t index = 0;
      while (NextInStream(&index)) {
        if (buffer_.size() < k_) {
          buffer_.push_back(index);
          continue;
        }
        uint64_t& slot = buffer_[rng_() % k_];
        const uint64_t out = slot;
        slot = index;
        return out;
      }
      Shuffle(buffer_, rng_);
      drained_ = true, drain_next_ = 0;
    }
    return buffer_[drain_next_++];
  }

  const std::shared_ptr<const std::vector<uint64_t>> starts_;  // shard i: [starts[i], starts[i + 1])
  const std::vector<uint32_t> shard_order_;
  const uint64_t k_;
  const std::mt19937_64 start_rng_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> buffer_;
  size_t next_shard_ = 0;  // in shard_order_
  uint64_t next_in_shard_ = 0;
  uint64_t produced_ = 0;  // positions handed out (or skipped) since the epoch's start
  bool drained_ = false;   // the stream has ended; the shuffled buffer is being emptied
  size_t drain_next_ = 0;
};

}  // namespace

Status EpochSampler::CheckOptions(const SamplerOptions& o) {
  if (o.batch_size == 0) return Status::InvalidArgument("batch size must be at least 1");
  if (o.world_size == 0 || o.rank >= o.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(o.rank) + " is not below world size " +
                                   std::to_string(o.world_size));
  }
  if (o.num_workers == 0 || o.worker >= o.num_workers) {
    return Status::InvalidArgument("worker " + std::to_string(o.worker) + " is not below num_workers " +
                                   std::to_string(o.num_workers));
  }
  return Status::OK();
}

Status EpochSampler::Create(uint64_t dataset_size, const SamplerOptions& o, EpochSampler* sampler,
                            const std::vector<uint64_t>& shard_sizes) {
  SHARDPACK_RETURN_IF_ERROR(CheckOptions(o));
  if (!o.drop_last && dataset_size < o.world_size) {
    return Status::InvalidArgument("a dataset of " + std::to_string(dataset_size) + " samples cannot give each of " +
                                   std::to_string(o.world_size) + " ranks a batch; use drop_last or fewer ranks");
  }
  sampler->size_ = dataset_size;
  sampler->start_ = 0;
  sampler->options_ = o;
  const bool shards_fit = std::accumulate(shard_sizes.begin(), shard_sizes.end(), uint64_t(0)) == dataset_size;
  auto starts = std::make_shared<std::vector<uint64_t>>(1, 0);
  if (shards_fit && !shard_sizes.empty()) {
    starts->reserve(shard_sizes.size() + 1);
    for (const uint64_t n : shard_sizes) starts->push_back(starts->back() + n);
  } else {
    starts->push_back(dataset_size);
  }
  sampler->shard_starts_ = std::move(starts);
  return sampler->Partition(dataset_size);
}

Status EpochSampler::CreateMixture(std::shared_ptr<const MixturePlan> plan, const SamplerOptions& o,
                                   EpochSampler* sampler) {
  SHARDPACK_RETURN_IF_ERROR(Create(plan->epoch_size(), o, sampler));
  sampler->mixture_ = std::move(plan);
  return Status::OK();
}

Status EpochSampler::Partition(uint64_t samples) {
  const SamplerOptions& o = options_;
  const uint64_t per_round = o.batch_size * o.world_size;  // samples in one batch of every rank
  rank_batches_ = o.drop_last ? samples / per_round : (samples + per_round - 1) / per_round;
  tail_rounds_ = 0;
  if (!o.drop_last) {
    // The fewest final rounds whose samples give every batch in them at least one sample.
    for (uint64_t k = 1; k <= rank_batches_; ++k) {
      if (samples - (rank_batches_ - k) * per_round >= k * o.world_size) {
        tail_rounds_ = k;
        break;
      }
    }
    if (tail_rounds_ == 0 && samples > 0) {
      // After an elastic resume only the rest of the epoch is shared out: say so, or the count
      // would look like the dataset's.
      const std::string what = start_ == 0
                                   ? "a dataset of " + std::to_string(samples) + " samples"
                                   : "the " + std::to_string(samples) + " samples left of the epoch (resumed after " +
                                         std::to_string(start_) + ")";
      return Status::InvalidArgument(what + " cannot give each of " + std::to_string(o.world_size) +
                                     " ranks the same number of batches of " + std::to_string(o.batch_size) +
                                     "; use drop_last or another batch size");
    }
  }
  return Status::OK();
}

Status EpochSampler::SetEpochStart(uint64_t samples_done) {
  if (samples_done > size_) {
    return Status::InvalidArgument("resuming after " + std::to_string(samples_done) + " samples of an epoch of " +
                                   std::to_string(size_));
  }
  start_ = samples_done;
  return Partition(size_ - start_);
}

uint64_t EpochSampler::SamplesConsumed(uint64_t rank_batches_done) const {
  const SamplerOptions& o = options_;
  const uint64_t k = std::min(rank_batches_done, rank_batches_);
  const uint64_t full_rounds = rank_batches_ - tail_rounds_;
  if (k <= full_rounds) return start_ + k * o.world_size * o.batch_size;
  // Into the tail rounds: their slots (round by round, rank by rank) share the rest evenly, in order.
  const uint64_t begin = full_rounds * o.world_size * o.batch_size;
  const uint64_t slots = tail_rounds_ * o.world_size, done = (k - full_rounds) * o.world_size;
  const uint64_t rest = size_ - start_ - begin;
  return start_ + begin + done * (rest / slots) + std::min(done, rest % slots);
}

uint64_t EpochSampler::worker_batches() const {
  const uint64_t w = options_.num_workers;
  return rank_batches_ / w + (options_.worker < rank_batches_ % w ? 1 : 0);
}

std::vector<uint64_t> EpochSampler::ShardOrder(uint64_t epoch) const {
  std::vector<uint64_t> order(shard_count());
  std::iota(order.begin(), order.end(), uint64_t(0));
  if (!options_.shuffle) return order;
  std::mt19937_64 rng = EpochRng(options_.seed ^ 0x5348415244ull, epoch);  // "SHARD": apart from the sample draws
  Shuffle(order, rng);
  return order;
}

std::unique_ptr<EpochOrder> EpochSampler::NewOrder(uint64_t epoch) const {
  if (mixture_ != nullptr) return mixture_->NewOrder(epoch);
  if (!options_.shuffle) return std::make_unique<IdentityOrder>();
  if (options_.shuffle_buffer == 0) {
    return std::make_unique<KeyedShuffleOrder>(KeyedPermutation(size_, EpochKey(options_.seed, epoch)));
  }
  return std::make_unique<StreamingShuffleOrder>(shard_starts_, ShardOrder(epoch), options_.shuffle_buffer,
                                                 EpochRng(options_.seed, epoch));
}

std::vector<uint64_t> EpochSampler::Permutation(uint64_t epoch) const {
  std::vector<uint64_t> order;
  order.reserve(size_);
  NewOrder(epoch)->Fill(0, size_, &order);
  return order;
}

void EpochSampler::BatchRange(uint64_t b, uint64_t* begin, uint64_t* end) const {
  const SamplerOptions& o = options_;
  const uint64_t rank_batch = b * o.num_workers + o.worker;  // this batch's number within the rank
  const uint64_t full_rounds = rank_batches_ - tail_rounds_;
  if (rank_batch < full_rounds) {
    const uint64_t g = rank_batch * o.world_size + o.rank;
    *begin = g * o.batch_size;
    *end = *begin + o.batch_size;
  } else {
    // The tail rounds: the samples left after the full rounds, shared evenly by their batches.
    const uint64_t start = full_rounds * o.world_size * o.batch_size;
    const uint64_t slots = tail_rounds_ * o.world_size;
    const uint64_t slot = (rank_batch - full_rounds) * o.world_size + o.rank;
    const uint64_t rest = size_ - start_ - start;
    const uint64_t base = rest / slots, extra = rest % slots;
    *begin = start + slot * base + std::min<uint64_t>(slot, extra);
    *end = *begin + base + (slot < extra ? 1 : 0);
  }
  *begin += start_;  // SetEpochStart: the batches come from the rest of the order
  *end += start_;
}

void EpochSampler::Batch(uint64_t epoch, uint64_t b, std::vector<uint64_t>* indices) {
  if (cached_.order == nullptr || cached_.epoch != epoch) {
    cached_.order = NewOrder(epoch);
    cached_.epoch = epoch;
  }
  uint64_t begin = 0, end = 0;
  BatchRange(b, &begin, &end);
  indices->clear();
  cached_.order->Fill(begin, end, indices);
}

std::vector<uint64_t> EpochSampler::ShardsPassed(uint64_t epoch) const {
  std::vector<uint64_t> passed;
  // A mixture's sources stream their shards each in its own order: no one stream leaves shards.
  if (!options_.shuffle || options_.shuffle_buffer == 0 || mixture_ != nullptr) return passed;
  // Permutation's stream: output p is drawn just before stream sample K + p enters the buffer, so
  // when output p is drawn the first K + p stream samples have entered. A shard whose stream range
  // ends at e has entered whole from output e - K on (from the start when e <= K).
  const uint64_t k = options_.shuffle_buffer;
  passed.assign(shard_count(), 0);
  uint64_t stream_end = 0;
  for (const uint64_t s : ShardOrder(epoch)) {
    stream_end += shard_size(s);
    passed[s] = stream_end > k ? stream_end - k : 0;
  }
  return passed;
}

}  // namespace shardpack
