// GroupedBatchSampler: the epoch's batches when every batch holds images of one aspect-ratio bucket,
// or images of their own sizes up to a token budget (docs/buckets.md). A pure function of (seed, epoch, position), as
// EpochSampler's, so that ranks agree without talking and a resumed epoch gives exactly the batches of an uninterrupted
// one:
//
//  1. The epoch's order is the dataset's (EpochSampler::NewOrder: the global or streaming shuffle, a
//     mixture's plan, or dataset order).
//  2. Buckets: walking the order front to back, each sample joins its bucket's open batch; a batch is
//     complete when it holds batch_size samples. Complete batches are the epoch's global batches 0,
//     1, ... in the order they complete, so that the buckets take turns as the shuffle brings their
//     samples.
//     Budget: walking the order front to back, each sample goes into the first of the open batches
//     (oldest first) that it fits in (their tokens and its at most the budget), else into a new
//     batch; a batch whose tokens reach the budget is complete at once, and when a new batch would
//     make more than kOpenBatches open, the oldest is complete. First-fit over a window of open
//     batches: a small sample fills a gap an earlier large one left.
//  3. Buckets: when the walk ends, the open batches, in the bucket list's order, are left out (kDrop),
//     handed out as they are (kPartial), or filled up with the bucket's first samples of the epoch
//     again, cycling through them when the bucket has fewer than a batch (kPad).
//     Budget: when the walk ends, the open batches are complete, oldest first (as kPartial).
//  4. Global batch g goes to rank g % world_size, as its batch g / world_size; a rank's batch b to
//     worker b % num_workers. Every rank gets the same number: with kDrop a last round that would
//     leave some rank without a batch is left out; otherwise it is completed with the epoch's first
//     global batches again, as torch's DistributedSampler pads.
//
// Elastic resume: the global batches depend on the order, the buckets and the batch size, not on the
// ranks or workers. A run with other ranks calls SetEpochStart(batches the earlier run's ranks took
// together, BatchesConsumed) and shares out the rest by rule 4. Another batch size makes other
// batches: the caller refuses it.
//
// Memory: the open batches (buckets x batch_size indices) and, for kPad, each bucket's first batch;
// the caller's table of each sample's bucket (a byte a sample) or tokens (4 bytes), which the
// processes of a node share when they have a cache folder (ops/read/node_group_table.h). Time: each rank
// walks the whole order; with a budget, counting an epoch's batches walks it once more.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shardpack/buckets.h"
#include "shardpack/sampler.h"
#include "shardpack/status.h"

namespace shardpack {

// A sample's grid of patches in a word: columns << 16 | rows; and back.
inline uint32_t PatchGrid(uint32_t columns, uint32_t rows) { return columns << 16 | rows; }
inline uint32_t GridColumns(uint32_t grid) { return grid >> 16; }
inline uint32_t GridRows(uint32_t grid) { return grid & 0xFFFF; }

// The most buckets a loader takes: a bucket is kept in a byte a sample (SampleGroups::bucket_of).
inline constexpr size_t kMaxLoaderBuckets = 255;
// The bucket_of entry of a sample in no bucket (BucketChoice): left out of every epoch.
inline constexpr uint8_t kNoLoaderBucket = 255;

// Each sample's entry (its bucket, its patch grid), wherever the loader keeps them: memory of its
// own, or the node's table mapped from the cache folder (ops/read/node_group_table.h). `owner`
// keeps the entries valid.
template <typename T>
class GroupColumn {
 public:
  GroupColumn() = default;
  GroupColumn(std::shared_ptr<const void> owner, const T* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}
  // A vector's entries (tests, and callers that make their own).
  GroupColumn(std::shared_ptr<const std::vector<T>> v)  // NOLINT: implicit, as a view of it
      : owner_(v), data_(v != nullptr ? v->data() : nullptr), size_(v != nullptr ? v->size() : 0) {}
  T operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  std::shared_ptr<const void> owner_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// What the loader groups samples by, an entry a sample in its numbering (a mixture's: source after
// source): each sample's bucket, or its patch grid; the other empty. `origin` says where they came
// from (Loader::sample_groups_origin), `note` what went wrong with the node's table (for the
// loader's warnings; empty when nothing did).
struct SampleGroups {
  GroupColumn<uint8_t> bucket_of;
  GroupColumn<uint32_t> patch_grid;
  std::string origin, note;
};

class GroupedBatchSampler {
 public:
  // order: an EpochSampler whose NewOrder gives the epoch's order (its own partition is not used).
  // bucket_of[i]: the bucket of sample i in the order's numbering (a mixture's: source after source).
  // per_epoch_counts: the samples in each bucket differ by epoch (a mixture draws its samples), so
  // each epoch's batch count comes from walking it; otherwise from bucket_of's histogram.
  // InvalidArgument when the dataset gives no batch, or too few for every rank.
  static Status Create(EpochSampler order, GroupColumn<uint8_t> bucket_of, size_t buckets,
                       const SamplerOptions& options, BucketTail tail, bool per_epoch_counts,
                       std::unique_ptr<GroupedBatchSampler>* sampler);
  // Batches under a token budget: patch_grid[i] is sample i's grid of patches, columns << 16 | rows
  // (PatchGrid), its cost columns x rows (at most `budget`). options.batch_size is not used.
  static Status CreateBudget(EpochSampler order, GroupColumn<uint32_t> patch_grid, uint64_t budget,
                             const SamplerOptions& options, std::unique_ptr<GroupedBatchSampler>* sampler);
  static constexpr size_t kOpenBatches = 8;
  ~GroupedBatchSampler();

  // This rank's batches of `epoch` (equal for every rank), and this worker's. Thread-safe.
  uint64_t rank_batches(uint64_t epoch) const;
  uint64_t worker_batches(uint64_t epoch) const;
  // Global batches of `epoch` before the rounds are completed or cut (rule 4).
  uint64_t global_batches(uint64_t epoch) const;
  // From now on the epoch's batches are shared out from global batch `batches_done` on (0: the whole
  // epoch). InvalidArgument past the epoch's global batches.
  Status SetEpochStart(uint64_t epoch, uint64_t batches_done);
  // The global batches of the epoch taken once every rank has taken its first `rank_batches_done`.
  uint64_t BatchesConsumed(uint64_t epoch, uint64_t rank_batches_done) const;

  // This worker's batch `b` of `epoch`: its samples in order, its bucket, and its global number
  // (from which each image's random crop is drawn: a repeated batch is cropped afresh). Walks on
  // from where the last call was; a batch behind it starts the walk again. Not thread-safe.
  void Batch(uint64_t epoch, uint64_t b, std::vector<uint64_t>* indices, uint32_t* bucket, uint64_t* global);

 private:
  // What both ways of grouping share; Create and CreateBudget add theirs.
  GroupedBatchSampler(EpochSampler order, const SamplerOptions& options, BucketTail tail, bool per_epoch_counts);
  uint64_t order_size() const;  // samples in the epoch's order
  // Samples per bucket in `epoch`.
  std::vector<uint64_t> BucketSizes(uint64_t epoch) const;
  // Global batches `bucket sizes` make under the tail rule.
  uint64_t GlobalBatches(const std::vector<uint64_t>& sizes) const;
  // Rounds a rank takes from `global` batches after `start` of them.
  uint64_t Rounds(uint64_t global, uint64_t start) const;

  // Walks the epoch's order, handing out its global batches one after another (rules 2 and 3).
  class Walk;

  EpochSampler order_;
  GroupColumn<uint8_t> bucket_of_;
  GroupColumn<uint32_t> patch_grid_;  // CreateBudget: each sample's patches
  uint64_t budget_ = 0;
  size_t buckets_ = 0;
  SamplerOptions options_;
  BucketTail tail_ = BucketTail::kPartial;
  std::vector<uint64_t> sizes_;  // without per-epoch counts: samples per bucket, every epoch
  bool per_epoch_counts_ = false;
  uint64_t start_epoch_ = 0, start_ = 0;  // SetEpochStart's epoch and global batches
  mutable std::mutex counts_mu_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> counts_;  // (epoch, global batches), a few kept
  std::unique_ptr<Walk> walk_;
};

}  // namespace shardpack
