// EpochSampler: which samples make up batch b of epoch e for one rank and worker. The plan every
// training loader needs, as a pure function of (seed, epoch, batch), so that any batch can be
// recomputed: resuming an epoch at batch b gives exactly the batches an uninterrupted run would.
//
// Order: a fresh permutation of all samples per epoch, a keyed permutation (a Feistel network with
// cycle walking, ops/read/keyed_permutation.h) keyed by (seed, epoch) and computed one position at a
// time, so that no array of the epoch's samples is ever made (order version 2; until 2026-12 it was
// Fisher-Yates over an array, kOrderVersion); or dataset order when shuffle is off.
// Global batch g holds order[g*B, (g+1)*B); rank r takes global batches
// r, r + world_size, r + 2*world_size, ... so that every rank gets the same number of batches and
// collective calls never wait on a rank with fewer:
//  - drop_last: N / (B * world_size) full batches per rank; the rest of the samples are left out;
//  - otherwise: ceil(N / (B * world_size)) batches per rank, all full but the last round or, when
//    that round would leave some rank an empty batch, the last few rounds, whose batches share the
//    remaining samples evenly (sizes differ by at most one). Every sample is in exactly one batch
//    of the epoch. Impossible only when N < world_size x batches per rank (say batch size 1 and N
//    not a multiple of world_size): Create() says so.
// Within a rank, batch b belongs to worker b % num_workers (DataLoader workers take turns).
//
// Streaming shuffle (shuffle_buffer > 0), for datasets read from disks or object stores where
// random reads are slow: the epoch's order visits the shards in a shuffled order, reading each from
// front to back, and passes the samples through a buffer of shuffle_buffer samples, each output
// drawn at random from it (as webdataset's shuffle() does). Sample p of the epoch then comes from
// within the first p + shuffle_buffer samples of that stream, so reads move forward through a few
// shards at a time. It is still a permutation of (seed, epoch): partitioning, equal batch counts and
// exact resume hold as for the global shuffle. Weaker mixing: samples stay near their shard.
//
// Elastic resume (another number of ranks, or another batch size): after every rank has taken its
// first k batches of an epoch, the samples taken are a prefix of the epoch's order, of length
// SamplesConsumed(k) (the rounds hand out the order front to back). A run with any world size and
// batch size that calls SetEpochStart(that length) partitions only the rest of the order, by the
// same rules: every sample of the epoch is then taken exactly once over both runs. Keeping the
// global batch (batch size x world size) keeps the number of optimizer steps as well; changing it
// keeps exactly-once but changes the steps left. With drop_last the samples left out are the last
// of the rest, so they may differ from an uninterrupted run's.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

class MixturePlan;  // shardpack/mixture.h

// Which order of an epoch a (seed, options) pair gives. 2: the global shuffle is a keyed permutation
// computed per position, and a mixture's per-source batches are laid out by one (2026-12); 1: both
// were Fisher-Yates shuffles of arrays. The streaming shuffle, the stratified mixture and no shuffle
// give the same order in both. A resume state records it, so that a state taken under another
// order is refused instead of resuming into other samples.
inline constexpr int kOrderVersion = 2;

// The order of one epoch, asked for by position. Random-access orders (no shuffle, the global
// shuffle) compute each position on its own; streamed ones (the streaming shuffle, a mixture) run
// a stream from the epoch's start and keep where it is, so that asking front to back costs a few
// steps a position and memory bounded by the shuffle buffer and the shard count; asking behind the
// stream starts it again.
class EpochOrder {
 public:
  virtual ~EpochOrder() = default;
  // Appends order[begin, end) to *out. Precondition: begin <= end <= the epoch's length.
  virtual void Fill(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) = 0;
};

struct SamplerOptions {
  uint64_t batch_size = 32;
  bool shuffle = true;
  uint64_t shuffle_buffer = 0;  // > 0: streaming shuffle with a buffer of this many samples
  uint64_t seed = 0;
  bool drop_last = false;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  uint32_t worker = 0;
  uint32_t num_workers = 1;
};

class EpochSampler {
 public:
  // InvalidArgument for a zero batch size or world size, a rank or worker out of range, or a
  // dataset too small to give every rank the same number of non-empty batches (without drop_last).
  // shard_sizes: samples per shard in dataset order, for the streaming shuffle; empty (or not
  // summing to dataset_size) counts as one shard.
  // InvalidArgument for options no dataset can satisfy (batch size 0, rank or worker out of range).
  static Status CheckOptions(const SamplerOptions& options);
  static Status Create(uint64_t dataset_size, const SamplerOptions& options, EpochSampler* sampler,
                       const std::vector<uint64_t>& shard_sizes = {});
  // A mixture of datasets (shardpack/mixture.h): the plan's epoch, whose positions are shared out
  // by the same rules as a dataset's samples (ranks, workers, tail rounds, elastic resume), in the
  // plan's order instead of a permutation of one dataset.
  static Status CreateMixture(std::shared_ptr<const MixturePlan> plan, const SamplerOptions& options,
                              EpochSampler* sampler);
  EpochSampler() = default;

  // Elastic resume: from now on the epoch's batches are made from order[samples_done, N) only, as if
  // that were the dataset (0: the whole order, as after Create). InvalidArgument when samples_done
  // exceeds the dataset, or the rest cannot give every rank the same number of non-empty batches.
  Status SetEpochStart(uint64_t samples_done);
  // The length of the prefix of the epoch's order taken once every rank has taken its first
  // `rank_batches_done` batches (counting the samples before SetEpochStart's start).
  uint64_t SamplesConsumed(uint64_t rank_batches_done) const;

  // Positions in the epoch's order: the dataset's samples, or a mixture plan's epoch.
  uint64_t epoch_size() const { return size_; }
  // Batches per epoch of this rank (equal for every rank), and of this worker within the rank.
  uint64_t rank_batches() const { return rank_batches_; }
  uint64_t worker_batches() const;
  // The dataset indices of this worker's batch `b` (0-based among the worker's batches) of `epoch`.
  // Precondition: b < worker_batches(). The epoch's order is kept between calls (NewOrder), so
  // walking an epoch front to back costs O(N) time in all and no memory per sample. Not
  // thread-safe.
  void Batch(uint64_t epoch, uint64_t b, std::vector<uint64_t>* indices);
  // The positions in the epoch's order that this worker's batch `b` takes: [*begin, *end), counted
  // from the order's start (SetEpochStart's samples included). Increasing with b.
  void BatchRange(uint64_t b, uint64_t* begin, uint64_t* end) const;
  // Streaming shuffle: for each shard (in dataset order), the position in the epoch's order from
  // which on every sample of it has entered the buffer: a sample of the shard taken there or later
  // has waited in the buffer while the stream moved on to later shards. Empty without the
  // streaming shuffle (a global shuffle reads every shard all epoch; no shuffle reads each shard
  // front to back, and is done with it when it moves on).
  std::vector<uint64_t> ShardsPassed(uint64_t epoch) const;
  // The order of epoch `epoch`, to be asked by position.
  std::unique_ptr<EpochOrder> NewOrder(uint64_t epoch) const;
  // The whole permutation of epoch `epoch` (identity without shuffle), as an array: for tests and
  // statistics over small datasets; the training path asks NewOrder by position.
  std::vector<uint64_t> Permutation(uint64_t epoch) const;
  // Streaming shuffle: the order in which epoch `epoch` reads the shards.
  std::vector<uint64_t> ShardOrder(uint64_t epoch) const;

 private:
  // The batch counts for `samples` samples of the order (rank_batches_, tail_rounds_).
  Status Partition(uint64_t samples);

  uint64_t size_ = 0;
  uint64_t start_ = 0;  // SetEpochStart: batches come from order[start_, size_)
  SamplerOptions options_;
  // Shard i's samples are [(*shard_starts_)[i], (*shard_starts_)[i + 1]); at least one shard
  // ({0, size_} when the dataset counts as one). Shared by the sampler's copies and the streaming
  // orders they make (the loader, the read planner's two walks): 8 bytes a shard once, not 24 in each.
  std::shared_ptr<const std::vector<uint64_t>> shard_starts_ = std::make_shared<const std::vector<uint64_t>>(1, 0);
  size_t shard_count() const { return shard_starts_->size() - 1; }
  uint64_t shard_size(size_t i) const { return (*shard_starts_)[i + 1] - (*shard_starts_)[i]; }
  uint64_t rank_batches_ = 0;
  uint64_t tail_rounds_ = 0;  // final rounds that share the remainder (0 with drop_last)
  // Batch()'s order of `epoch`, kept so that a streamed order goes on from where it is. A copy of
  // the sampler starts its own: two samplers never share a stream.
  struct CachedOrder {
    std::shared_ptr<EpochOrder> order;
    uint64_t epoch = 0;
    CachedOrder() = default;
    CachedOrder(const CachedOrder&) {}
    CachedOrder& operator=(const CachedOrder&) {
      order.reset();
      return *this;
    }
  };
  CachedOrder cached_;
  std::shared_ptr<const MixturePlan> mixture_;  // CreateMixture: the order is the plan's
};

}  // namespace shardpack
