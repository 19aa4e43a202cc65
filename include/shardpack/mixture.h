// Mixing datasets: one loader over several sources, each with its share of every epoch
// (docs/mixing.md has the rules with examples, and how they compare with other loaders').
//
// The epoch's quota of each source (samples it gives per epoch), in this order of precedence:
//  1. a source with `samples` gives exactly that many; one with `passes` gives round(passes x its
//     size) (half away from zero);
//  2. the other sources ("weighted") share the rest: epoch_size minus the fixed quotas, or, without
//     epoch_size, the sum of the weighted sources' sizes. Each gets rest x weight / (sum of the
//     weighted sources' weights), rounded down, and the samples still missing go one each to the
//     largest remainders (ties: the earlier source): largest-remainder rounding.
// The epoch is the sum of the quotas.
//
// Which source each position of an epoch takes (the pattern), in mixed batches (the default): the
// sources' quotas q_i spread over the epoch's E positions so that, for every n, the first n
// positions hold floor(n q_i / E) or ceil(n q_i / E) samples of source i. Position n (1-based) goes
// to the source whose next sample j (its (c_i + 1)-th) is released, floor((j - 1) E / q_i) + 1 <= n,
// with the earliest deadline ceil(j E / q_i); ties to the earlier source. (Earliest deadline first
// meets every deadline because some order does: Balinski and Young's quota method.) So the first
// k x B samples (B the batch size) hold floor(k B q_i / E) or ceil(k B q_i / E) of source i for
// every k, never a binomial draw. The pattern is the same every epoch; what varies is which sample
// of each source comes.
// Per-source batches (per_source_batches): every quota rounded to the nearest multiple of the batch
// size (at least one batch); the epoch's batches are the sources' batches in a seeded random order
// (the multiset of batch labels, source by source, in the order of a keyed permutation drawn afresh
// each epoch; order version 2, shardpack/sampler.h), each batch from one source.
//
// Which sample of a source: the source has an endless stream, its passes one after another, each
// pass a fresh permutation of its samples (the pass number is the permutation's epoch; the
// streaming shuffle per pass with shuffle_buffer). Epoch e takes the stream's samples
// [e x q_i, (e + 1) x q_i): a small source repeats whole passes, a large one gives a fresh part of
// its pass each epoch and repeats nothing until the pass is through.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardpack/sampler.h"
#include "shardpack/status.h"

namespace shardpack {

// The most samples an epoch of a mixture may hold (about 17 billion, a dozen times the largest
// open image datasets): every quota, epoch_size and their sum are refused above it, so that a
// mistyped passes=1e30 or samples=2**40 is an error at open, not an allocation that fails later.
inline constexpr uint64_t kMaxEpochSamples = uint64_t(1) << 34;

struct MixtureSource {
  std::string location;  // a dataset, as Loader::Open takes it (a folder, shard list or URL)
  double weight = 1.0;   // its share of the weighted sources' part of the epoch
  uint64_t samples = 0;  // > 0: exactly this many samples per epoch (overrides the weight)
  double passes = 0;     // > 0: this many passes over the source per epoch (overrides the weight)
};

struct Mixture {
  std::vector<MixtureSource> sources;
  uint64_t epoch_size = 0;          // 0: the rule above
  bool per_source_batches = false;  // each batch from one source
  // Labels in one table over every source's classes, by name: the first source's classes in its
  // order, then each later source's new names in its order. Otherwise each source keeps its own
  // label numbers (Batch::sources tells them apart).
  bool shared_classes = false;
};

// "source 2 (path)": how messages name a source (1-based, as a user counts them).
std::string MixtureSourceName(const Mixture& mixture, size_t source);

// InvalidArgument, naming the source, for a weight that is zero, negative or not a number, a
// negative or non-finite `passes`, an empty location, or no sources; for `samples` or epoch_size
// above kMaxEpochSamples, and for weights whose sum is not a finite number.
Status CheckMixture(const Mixture& mixture);

class MixturePlan {
 public:
  // sizes[i]: source i's samples; shard_sizes[i]: its shards' samples (for the streaming shuffle;
  // empty counts as one shard). InvalidArgument, naming the source, for an empty source or quotas
  // that do not fit epoch_size, or an epoch above kMaxEpochSamples.
  static Status Create(const Mixture& mixture, const std::vector<uint64_t>& sizes,
                       const std::vector<std::vector<uint64_t>>& shard_sizes, const SamplerOptions& options,
                       MixturePlan* plan);

  uint64_t epoch_size() const { return epoch_size_; }
  // Sentences for the caller to show: a weighted source whose weight is so small that its quota
  // rounds to no sample at all.
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::vector<uint64_t>& quotas() const { return quotas_; }
  // Source i's samples are global indices [offsets()[i], offsets()[i] + sizes[i]).
  const std::vector<uint64_t>& offsets() const { return offsets_; }
  uint32_t SourceOf(uint64_t global_index) const;
  // The source of each position of epoch `epoch`.
  std::vector<uint32_t> Pattern(uint64_t epoch) const;
  // The order of epoch `epoch` (global indices), asked by position (EpochOrder); it refers to this
  // plan, which must outlive it.
  std::unique_ptr<EpochOrder> NewOrder(uint64_t epoch) const;
  // The global index of each position of epoch `epoch`, as an array: for tests and statistics.
  std::vector<uint64_t> Order(uint64_t epoch) const;

 private:
  uint64_t epoch_size_ = 0;
  std::vector<std::string> warnings_;
  std::vector<uint64_t> sizes_, quotas_, offsets_;
  std::vector<EpochSampler> passes_;  // per source: Permutation(pass) is the pass's order
  SamplerOptions options_;
  bool per_source_batches_ = false;
};

}  // namespace shardpack
