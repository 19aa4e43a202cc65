// MixturePlan: each source's quota, the epoch's pattern of sources, and its order of samples. The
// rules are in include/shardpack/mixture.h; tests check them against a Python reference written
// from that text (python/tests/test_mixing.py).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "shardpack/mixture.h"

namespace shardpack {

namespace {

bool Weighted(const MixtureSource& s) { return s.samples == 0 && s.passes == 0; }

// A weight or a count of passes as a person writes it: 1e-12, 1e+30, 0.25.
std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

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

// The stratified pattern: earliest deadline first over each source's next sample (mixture.h).
std::vector<uint32_t> StratifiedPattern(const std::vector<uint64_t>& quotas, uint64_t epoch_size) {
  using Wide = unsigned __int128;  // j x E may pass 2^64 for datasets of billions of samples
  std::vector<uint32_t> pattern;
  pattern.reserve(epoch_size);
  std::vector<uint64_t> taken(quotas.size(), 0);
  for (uint64_t n = 1; n <= epoch_size; ++n) {
    size_t best = quotas.size();
    Wide best_deadline = 0;
    for (size_t i = 0; i < quotas.size(); ++i) {
      if (taken[i] >= quotas[i]) continue;
      const Wide j = taken[i] + 1;
      const Wide release = (j - 1) * epoch_size / quotas[i] + 1;
      if (release > n) continue;
      const Wide deadline = (j * epoch_size + quotas[i] - 1) / quotas[i];
      if (best == quotas.size() || deadline < best_deadline) best = i, best_deadline = deadline;
    }
    // Never quotas.size(): the first n positions' upper quotas sum to at least n, so some source's
    // next sample is released.
    ++taken[best];
    pattern.push_back(uint32_t(best));
  }
  return pattern;
}

// Per-source batches: the multiset of batch labels, shuffled afresh each epoch.
std::vector<uint32_t> PerSourcePattern(const std::vector<uint64_t>& quotas, uint64_t batch, uint64_t seed,
                                       uint64_t epoch) {
  std::vector<uint32_t> batches;
  for (size_t i = 0; i < quotas.size(); ++i) batches.insert(batches.end(), quotas[i] / batch, uint32_t(i));
  uint64_t z = (seed ^ 0x4D49585455524Eull) + 0x9E3779B97F4A7C15ull * (epoch + 1);  // "MIXTURN"
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  std::mt19937_64 rng(z ^ (z >> 31));
  for (uint64_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng() % i]);
  std::vector<uint32_t> pattern;
  pattern.reserve(batches.size() * batch);
  for (const uint32_t source : batches) pattern.insert(pattern.end(), batch, source);
  return pattern;
}

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
      return Status::InvalidArgument(name + ": the weight must be a positive number, got " + std::to_string(s.weight));
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
      return Status::InvalidArgument(MixtureSourceName(mixture, i) + ": " + Number(s.passes) + " passes over its " +
                                     std::to_string(sizes[i]) + " samples make more than the " +
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
      plan->warnings_.push_back(MixtureSourceName(mixture, weighted[k]) + ": its weight " + Number(weights[k]) +
                                " gives it " + Number(weights[k] / weight_sum * double(rest)) + " of the epoch's " +
                                std::to_string(rest) +
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

std::vector<uint32_t> MixturePlan::Pattern(uint64_t epoch) const {
  if (per_source_batches_) return PerSourcePattern(quotas_, options_.batch_size, options_.seed, epoch);
  return StratifiedPattern(quotas_, epoch_size_);  // the same every epoch
}

std::vector<uint64_t> MixturePlan::Order(uint64_t epoch) const {
  const std::vector<uint32_t> pattern = Pattern(epoch);
  const size_t n = quotas_.size();
  std::vector<uint64_t> stream(n), pass(n, UINT64_MAX);  // each source's stream position, and its pass
  for (size_t i = 0; i < n; ++i) stream[i] = epoch * quotas_[i];
  std::vector<std::vector<uint64_t>> permutation(n);
  std::vector<uint64_t> order;
  order.reserve(pattern.size());
  for (const uint32_t i : pattern) {
    const uint64_t p = stream[i]++;
    if (p / sizes_[i] != pass[i]) {
      pass[i] = p / sizes_[i];
      permutation[i] = passes_[i].Permutation(pass[i]);
    }
    order.push_back(offsets_[i] + permutation[i][p % sizes_[i]]);
  }
  return order;
}

}  // namespace shardpack
