// MixturePlan: each source's quota, the epoch's pattern of sources, and its order of samples. The
// rules are in include/shardpack/mixture.h; tests check them against a Python reference written
// from that text (python/tests/test_mixing.py).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "ground/units.h"
#include "ops/read/keyed_permutation.h"
#include "shardpack/mixture.h"

namespace shardpack {

namespace {

bool Weighted(const MixtureSource& s) { return s.samples == 0 && s.passes == 0; }

// A weight or a count of passes as a person writes it: 1e-12, 1e+30, 0.25.
// Largest-remainder shares of `total` by `weights` (all positive).
std::vector<uint64_t> LargestRemainder(uint64_t total, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<uint64_t> shares(weights.size());
  std::vector<double> remainders(weights.size());
  uint64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    // The share first (at most 1), then the samples: total x weight could overflow to infinity,
    // which no integer holds (found by fuzz_mixture: a weight of 1e308 beside a small one).
    const double exact = std::min(double(total), double(total) * (weights[i] / sum));
    shares[i] = std::min(total, uint64_t(std::floor(exact)));
    remainders[i] = exact - std::floor(exact);
    given += shares[i];
  }
  std::vector<size_t> by_remainder(weights.size());
  std::iota(by_remainder.begin(), by_remainder.end(), size_t(0));
  std::stable_sort(by_remainder.begin(), by_remainder.end(),
                   [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
  for (size_t k = 0; given < total && k < by_remainder.size(); ++k, ++given) ++shares[by_remainder[k]];
  return shares;
}

// The epoch's pattern of sources as a stream, position after position.
class PatternStream {
 public:
  virtual ~PatternStream() = default;
  virtual uint32_t Next() = 0;
};

// The stratified pattern: earliest deadline first over each source's next sample (mixture.h). Keeps
// each source's count taken: memory in the number of sources.
class StratifiedPattern final : public PatternStream {
 public:
  StratifiedPattern(const std::vector<uint64_t>& quotas, uint64_t epoch_size)
      : quotas_(quotas), epoch_size_(epoch_size), taken_(quotas.size(), 0) {}
  uint32_t Next() override {
    using Wide = unsigned __int128;  // j x E may pass 2^64 for datasets of billions of samples
    const uint64_t n = ++position_;
    size_t best = quotas_.size();
    Wide best_deadline = 0;
    for (size_t i = 0; i < quotas_.size(); ++i) {
      if (taken_[i] >= quotas_[i]) continue;
      const Wide j = taken_[i] + 1;
      const Wide release = (j - 1) * epoch_size_ / quotas_[i] + 1;
      if (release > n) continue;
      const Wide deadline = (j * epoch_size_ + quotas_[i] - 1) / quotas_[i];
      if (best == quotas_.size() || deadline < best_deadline) best = i, best_deadline = deadline;
    }
    // Never quotas.size() within the epoch: the first n positions' upper quotas sum to at least n,
    // so some source's next sample is released.
    ++taken_[best];
    return uint32_t(best);
  }

 private:
  const std::vector<uint64_t> quotas_;
  const uint64_t epoch_size_;
  std::vector<uint64_t> taken_;
  uint64_t position_ = 0;
};

// Per-source batches: the multiset of batch labels (quota_i / B batches of source i, source by
// source) in the order of a keyed permutation of its slots, fresh each epoch; every position of a
// batch has its batch's source.
class PerSourcePattern final : public PatternStream {
 public:
  PerSourcePattern(const std::vector<uint64_t>& quotas, uint64_t batch, uint64_t seed, uint64_t epoch) : batch_(batch) {
    uint64_t total = 0;
    for (const uint64_t q : quotas) ends_.push_back(total += q / batch);
    slots_ = KeyedPermutation(total, EpochKey(seed ^ 0x4D49585455524Eull, epoch));  // "MIXTURN"
  }
  uint32_t Next() override {
    const uint64_t label = slots_(position_++ / batch_);
    return uint32_t(std::upper_bound(ends_.begin(), ends_.end(), label) - ends_.begin());
  }

 private:
  const uint64_t batch_;
  std::vector<uint64_t> ends_;  // per source: the end of its range of batch labels
  KeyedPermutation slots_;
  uint64_t position_ = 0;
};

}  // namespace

std::string MixtureSourceName(const Mixture& mixture, size_t source) {
  return "source " + std::to_string(source + 1) + " (" + mixture.sources[source].location + ")";
}

Status CheckMixture(const Mixture& mixture) {
  if (mixture.sources.empty()) return Status::InvalidArgument("a mixture needs at least one source");
  for (size_t i = 0; i < mixture.sources.size(); ++i) {
    const MixtureSource& s = mixture.sources[i];
    const std::string name = MixtureSourceName(mixture, i);
    if (s.location.empty()) return Status::InvalidArgument(name + ": the location is empty");
    if (!std::isfinite(s.passes) || s.passes < 0) {
      return Status::InvalidArgument(name + ": passes must be a finite number of at least 0, got " +
                                     std::to_string(s.passes));
    }
    if (!Weighted(s)) continue;
    if (std::isnan(s.weight)) return Status::InvalidArgument(name + ": the weight is not a number");
    if (!(s.weight > 0) || !std::isfinite(s.weight)) {
      return Status::InvalidArgument(name + ": the weight must be a positive number, got " + FormatNumber(s.weight));
    }
  }
  const auto too_many = [](const std::string& what, const std::string& value) {
    return Status::InvalidArgument(what + " is " + value + ", more than the " + std::to_string(kMaxEpochSamples) +
                                   " samples an epoch may hold");
  };
  for (size_t i = 0; i < mixture.sources.size(); ++i) {
    if (mixture.sources[i].samples > kMaxEpochSamples) {
      return too_many(MixtureSourceName(mixture, i) + ": samples", std::to_string(mixture.sources[i].samples));
    }
  }
  if (mixture.epoch_size > kMaxEpochSamples) return too_many("epoch_size", std::to_string(mixture.epoch_size));
  double weights = 0;  // only their ratios count, but their sum must be a number
  for (const MixtureSource& s : mixture.sources) weights += Weighted(s) ? s.weight : 0;
  if (!std::isfinite(weights)) {
    return Status::InvalidArgument(
        "the weights add up to more than a floating-point number holds: scale them "
        "down (only their ratios count)");
  }
  return Status::OK();
}

Status MixturePlan::Create(const Mixture& mixture, const std::vector<uint64_t>& sizes,
                           const std::vector<std::vector<uint64_t>>& shard_sizes, const SamplerOptions& options,
                           MixturePlan* plan) {
  SHARDPACK_RETURN_IF_ERROR(CheckMixture(mixture));
  SHARDPACK_RETURN_IF_ERROR(EpochSampler::CheckOptions(options));
  const size_t n = mixture.sources.size();
  plan->sizes_ = sizes;
  plan->warnings_.clear();
  plan->options_ = options;
  plan->per_source_batches_ = mixture.per_source_batches;
  plan->quotas_.assign(n, 0);
  plan->offsets_.assign(n, 0);
  for (size_t i = 1; i < n; ++i) plan->offsets_[i] = plan->offsets_[i - 1] + sizes[i - 1];
  uint64_t fixed = 0, weighted_size = 0;
  std::vector<size_t> weighted;
  std::vector<double> weights;
  for (size_t i = 0; i < n; ++i) {
    const MixtureSource& s = mixture.sources[i];
    if (sizes[i] == 0) return Status::InvalidArgument(MixtureSourceName(mixture, i) + " holds no samples");
    if (Weighted(s)) {
      weighted.push_back(i);
      weights.push_back(s.weight);
      weighted_size += sizes[i];
      continue;
    }
    // Bounded before the cast: a double beyond 2^64 has no uint64_t value (undefined behaviour).
    const double quota = s.samples > 0 ? double(s.samples) : std::round(s.passes * double(sizes[i]));
    if (quota > double(kMaxEpochSamples)) {
      return Status::InvalidArgument(MixtureSourceName(mixture, i) + ": " + FormatNumber(s.passes) +
                                     " passes over its " + std::to_string(sizes[i]) + " samples make more than the " +
                                     std::to_string(kMaxEpochSamples) + " samples an epoch may hold");
    }
    plan->quotas_[i] = s.samples > 0 ? s.samples : uint64_t(quota);
    fixed += plan->quotas_[i];
  }
  if (fixed > kMaxEpochSamples) {
    return Status::InvalidArgument("the sources' fixed quotas (samples, passes) add up to " + std::to_string(fixed) +
                                   " samples, more than the " + std::to_string(kMaxEpochSamples) +
                                   " an epoch may hold");
  }
  if (mixture.epoch_size == 0 && weighted_size > kMaxEpochSamples - fixed) {
    return Status::InvalidArgument("the sources hold " + std::to_string(weighted_size + fixed) +
                                   " samples, more than the " + std::to_string(kMaxEpochSamples) +
                                   " an epoch may hold: give epoch_size");
  }
  uint64_t rest = weighted_size;
  if (mixture.epoch_size > 0) {
    if (fixed > mixture.epoch_size || (weighted.empty() && fixed != mixture.epoch_size)) {
      return Status::InvalidArgument("the sources' fixed quotas (samples, passes) add up to " + std::to_string(fixed) +
                                     " samples, which does not fit an epoch_size of " +
                                     std::to_string(mixture.epoch_size));
    }
    rest = mixture.epoch_size - fixed;
  }
  const std::vector<uint64_t> shares = LargestRemainder(rest, weights);
  double weight_sum = 0;
  for (const double w : weights) weight_sum += w;
  for (size_t k = 0; k < weighted.size(); ++k) {
    plan->quotas_[weighted[k]] = shares[k];
    if (shares[k] == 0 && rest > 0) {
      // Its weight is so small against the others that no sample of the epoch falls to it.
      plan->warnings_.push_back(MixtureSourceName(mixture, weighted[k]) + ": its weight " + FormatNumber(weights[k]) +
                                " gives it " + FormatNumber(weights[k] / weight_sum * double(rest)) +
                                " of the epoch's " + std::to_string(rest) +
                                " weighted samples, so it gives none: raise its weight, or give it samples or passes");
    }
  }
  if (mixture.per_source_batches) {
    // Whole batches: the nearest multiple of the batch size, at least one batch.
    const uint64_t b = options.batch_size;
    for (uint64_t& q : plan->quotas_) q = std::max<uint64_t>(1, (q + b / 2) / b) * b;
  }
  plan->epoch_size_ = std::accumulate(plan->quotas_.begin(), plan->quotas_.end(), uint64_t(0));
  if (plan->epoch_size_ == 0) return Status::InvalidArgument("the mixture's epoch holds no samples");
  // Each source's passes: its own permutation per pass, seeded apart from the other sources' (the
  // first source's seed is the loader's, so that a mixture of one source reads as that source).
  plan->passes_.assign(n, EpochSampler());
  for (size_t i = 0; i < n; ++i) {
    SamplerOptions per_pass;
    per_pass.shuffle = options.shuffle;
    per_pass.shuffle_buffer = options.shuffle_buffer;
    per_pass.seed = options.seed ^ (0x9E3779B97F4A7C15ull * i);
    per_pass.batch_size = 1;
    const std::vector<uint64_t> shards = i < shard_sizes.size() ? shard_sizes[i] : std::vector<uint64_t>();
    SHARDPACK_RETURN_IF_ERROR(EpochSampler::Create(sizes[i], per_pass, &plan->passes_[i], shards));
  }
  return Status::OK();
}

uint32_t MixturePlan::SourceOf(uint64_t global_index) const {
  return uint32_t(std::upper_bound(offsets_.begin(), offsets_.end(), global_index) - offsets_.begin() - 1);
}

namespace {

std::unique_ptr<PatternStream> NewPattern(const std::vector<uint64_t>& quotas, uint64_t epoch_size,
                                          bool per_source_batches, const SamplerOptions& options, uint64_t epoch) {
  if (per_source_batches) return std::make_unique<PerSourcePattern>(quotas, options.batch_size, options.seed, epoch);
  return std::make_unique<StratifiedPattern>(quotas, epoch_size);  // the same every epoch
}

}  // namespace

std::vector<uint32_t> MixturePlan::Pattern(uint64_t epoch) const {
  const std::unique_ptr<PatternStream> stream = NewPattern(quotas_, epoch_size_, per_source_batches_, options_, epoch);
  std::vector<uint32_t> pattern(epoch_size_);
  for (uint32_t& source : pattern) source = stream->Next();
  return pattern;
}

namespace {

// The epoch's order as a stream: the pattern says which source each position takes; that source's
// stream (its passes one after another, each its own order) gives the sample. Epoch e starts each
// source's stream at e x quota. Keeps one pass's order per source.
class MixtureOrder final : public EpochOrder {
 public:
  MixtureOrder(const MixturePlan& plan, const std::vector<EpochSampler>& passes, const std::vector<uint64_t>& sizes,
               bool per_source_batches, const SamplerOptions& options, uint64_t epoch)
      : plan_(plan),
        passes_(passes),
        sizes_(sizes),
        per_source_batches_(per_source_batches),
        options_(options),
        epoch_(epoch) {
    Restart();
  }

  void Fill(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) override {
    if (begin < position_) Restart();
    std::vector<uint64_t> skipped;
    for (; position_ < begin; ++position_) {
      Next(&skipped);
      skipped.clear();
    }
    for (; position_ < end; ++position_) Next(out);
  }

 private:
  void Restart() {
    const std::vector<uint64_t>& quotas = plan_.quotas();
    pattern_ = NewPattern(quotas, plan_.epoch_size(), per_source_batches_, options_, epoch_);
    stream_.assign(quotas.size(), 0);
    for (size_t i = 0; i < quotas.size(); ++i) stream_[i] = epoch_ * quotas[i];
    pass_.assign(quotas.size(), UINT64_MAX);
    pass_order_.clear();
    pass_order_.resize(quotas.size());
    position_ = 0;
  }

  void Next(std::vector<uint64_t>* out) {
    const uint32_t i = pattern_->Next();
    const uint64_t p = stream_[i]++;
    if (p / sizes_[i] != pass_[i]) {
      pass_[i] = p / sizes_[i];
      pass_order_[i] = passes_[i].NewOrder(pass_[i]);
    }
    const size_t before = out->size();
    pass_order_[i]->Fill(p % sizes_[i], p % sizes_[i] + 1, out);
    (*out)[before] += plan_.offsets()[i];
  }

  const MixturePlan& plan_;
  const std::vector<EpochSampler>& passes_;
  const std::vector<uint64_t>& sizes_;
  const bool per_source_batches_;
  const SamplerOptions options_;
  const uint64_t epoch_;
  std::unique_ptr<PatternStream> pattern_;
  std::vector<uint64_t> stream_, pass_;                  // per source: its stream's position and pass
  std::vector<std::unique_ptr<EpochOrder>> pass_order_;  // per source: the order of its pass
  uint64_t position_ = 0;
};

}  // namespace

std::unique_ptr<EpochOrder> MixturePlan::NewOrder(uint64_t epoch) const {
  return std::make_unique<MixtureOrder>(*this, passes_, sizes_, per_source_batches_, options_, epoch);
}

std::vector<uint64_t> MixturePlan::Order(uint64_t epoch) const {
  std::vector<uint64_t> order;
  order.reserve(epoch_size_);
  NewOrder(epoch)->Fill(0, epoch_size_, &order);
  return order;
}

}  // namespace shardpack
