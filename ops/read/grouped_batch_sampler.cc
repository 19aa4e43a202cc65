#include "ops/read/grouped_batch_sampler.h"

#include <algorithm>
#include <deque>

namespace shardpack {
namespace {

// Samples per bucket. Four tables counted in turn, summed at the end: one table makes each count
// wait for the one before whenever neighbours share a bucket (the usual case with few buckets),
// which at a billion samples was most of opening a mapped node table.
std::vector<uint64_t> CountBuckets(const GroupColumn<uint8_t>& bucket_of, size_t buckets) {
  uint64_t counts[4][256] = {};
  const uint8_t* k = bucket_of.begin();
  const size_t n = bucket_of.size(), whole = n - n % 4;
  for (size_t i = 0; i < whole; i += 4) {
    ++counts[0][k[i]];
    ++counts[1][k[i + 1]];
    ++counts[2][k[i + 2]];
    ++counts[3][k[i + 3]];
  }
  for (size_t i = whole; i < n; ++i) ++counts[0][k[i]];
  std::vector<uint64_t> sizes(buckets, 0);
  for (size_t b = 0; b < buckets; ++b) sizes[b] = counts[0][b] + counts[1][b] + counts[2][b] + counts[3][b];
  return sizes;
}

}  // namespace

// Rules 2 and 3 of grouped_batch_sampler.h, one global batch at a time. Keeps the open batch of every
// bucket and, for kPad, every bucket's first samples.
class GroupedBatchSampler::Walk {
  // Budget: an open batch and its tokens.
  struct OpenBatch {
    uint64_t tokens = 0;
    std::vector<uint64_t> indices;
  };

 public:
  Walk(const GroupedBatchSampler& s, uint64_t epoch)
      : s_(s), epoch_(epoch), order_(s.order_.NewOrder(epoch)), open_(s.buckets_), first_(s.buckets_) {}

  uint64_t epoch() const { return epoch_; }
  uint64_t next() const { return next_; }  // the global number of the batch Next() gives

  // The next global batch; false when the epoch has no more.
  bool Next(std::vector<uint64_t>* indices, uint32_t* bucket) {
    if (s_.budget_ != 0) return NextUnderBudget(indices, bucket);
    const uint64_t batch_size = s_.options_.batch_size;
    while (position_ < s_.order_size()) {
      if (chunk_at_ == chunk_.size()) Refill();
      const uint64_t index = chunk_[chunk_at_++];
      ++position_;
      const uint32_t k = s_.bucket_of_[index];
      if (k >= s_.buckets_) continue;  // in no bucket (kNoLoaderBucket): left out
      if (s_.tail_ == BucketTail::kPad && first_[k].size() < batch_size) first_[k].push_back(index);
      open_[k].push_back(index);
      if (open_[k].size() == batch_size) return Hand(k, indices, bucket);
    }
    // The tails, in the bucket list's order.
    while (tail_bucket_ < open_.size()) {
      const uint32_t k = uint32_t(tail_bucket_++);
      if (open_[k].empty() || s_.tail_ == BucketTail::kDrop) continue;
      for (size_t i = 0; s_.tail_ == BucketTail::kPad && open_[k].size() < batch_size; ++i) {
        open_[k].push_back(first_[k][i % first_[k].size()]);
      }
      return Hand(k, indices, bucket);
    }
    return false;
  }

 private:
  // Rules 2 and 3 under a budget.
  bool NextUnderBudget(std::vector<uint64_t>* indices, uint32_t* bucket) {
    *bucket = 0;
    while (position_ < s_.order_size()) {
      if (chunk_at_ == chunk_.size()) Refill();
      const uint64_t index = chunk_[chunk_at_++];
      ++position_;
      const uint32_t grid = s_.patch_grid_[index];
      const uint64_t t = uint64_t(GridColumns(grid)) * GridRows(grid);
      auto fit = std::find_if(packing_.begin(), packing_.end(),
                              [&](const OpenBatch& b) { return b.tokens + t <= s_.budget_; });
      if (fit == packing_.end()) {
        packing_.push_back({});
        fit = packing_.end() - 1;
      }
      fit->tokens += t;
      fit->indices.push_back(index);
      if (fit->tokens == s_.budget_) return HandOpen(fit, indices);
      if (packing_.size() > kOpenBatches) return HandOpen(packing_.begin(), indices);
    }
    if (packing_.empty()) return false;
    return HandOpen(packing_.begin(), indices);
  }

  bool HandOpen(std::deque<OpenBatch>::iterator batch, std::vector<uint64_t>* indices) {
    indices->swap(batch->indices);
    packing_.erase(batch);
    ++next_;
    return true;
  }

  bool Hand(uint32_t k, std::vector<uint64_t>* indices, uint32_t* bucket) {
    indices->swap(open_[k]);
    open_[k].clear();
    *bucket = k;
    ++next_;
    return true;
  }

  // The next stretch of the order: asked for a few hundred positions at a time, as a streamed order
  // (the streaming shuffle, a mixture) goes on from where it is.
  void Refill() {
    const uint64_t end = std::min<uint64_t>(s_.order_size(), position_ + 256);
    chunk_.clear();
    chunk_at_ = 0;
    order_->Fill(position_, end, &chunk_);
  }

  const GroupedBatchSampler& s_;
  uint64_t epoch_;
  std::unique_ptr<EpochOrder> order_;
  std::vector<std::vector<uint64_t>> open_;   // each bucket's batch being filled
  std::vector<std::vector<uint64_t>> first_;  // kPad: each bucket's first batch_size samples
  std::vector<uint64_t> chunk_;
  size_t chunk_at_ = 0;
  std::deque<OpenBatch> packing_;  // budget: the open batches, oldest first
  uint64_t position_ = 0;          // in the epoch's order
  size_t tail_bucket_ = 0;
  uint64_t next_ = 0;
};

Status GroupedBatchSampler::Create(EpochSampler order, GroupColumn<uint8_t> bucket_of, size_t buckets,
                                   const SamplerOptions& options, BucketTail tail, bool per_epoch_counts,
                                   std::unique_ptr<GroupedBatchSampler>* sampler) {
  SHARDPACK_RETURN_IF_ERROR(EpochSampler::CheckOptions(options));
  std::unique_ptr<GroupedBatchSampler> s(new GroupedBatchSampler(std::move(order), options, tail, per_epoch_counts));
  s->bucket_of_ = std::move(bucket_of);
  s->buckets_ = buckets;
  if (!per_epoch_counts) {
    s->sizes_ = CountBuckets(s->bucket_of_, buckets);
  }
  // Epoch 0 stands for every epoch of a dataset; a mixture's epochs are checked as they start.
  const uint64_t global = s->global_batches(0);
  if (global == 0) {
    return Status::InvalidArgument(
        "no bucket holds a whole batch of " + std::to_string(options.batch_size) +
        " images, and bucket_tail=drop leaves out the smaller ones: every epoch would be empty. Use a smaller "
        "batch size, fewer buckets, or bucket_tail=partial or pad");
  }
  if (tail == BucketTail::kDrop && global < options.world_size) {
    return Status::InvalidArgument("the buckets make " + std::to_string(global) + " whole batches of " +
                                   std::to_string(options.batch_size) + ", fewer than the " +
                                   std::to_string(options.world_size) +
                                   " ranks: with bucket_tail=drop some rank would get none. Use a smaller batch "
                                   "size, or bucket_tail=partial or pad");
  }
  *sampler = std::move(s);
  return Status::OK();
}

GroupedBatchSampler::GroupedBatchSampler(EpochSampler order, const SamplerOptions& options, BucketTail tail,
                                         bool per_epoch_counts)
    : order_(std::move(order)), options_(options), tail_(tail), per_epoch_counts_(per_epoch_counts) {}

GroupedBatchSampler::~GroupedBatchSampler() = default;

Status GroupedBatchSampler::CreateBudget(EpochSampler order, GroupColumn<uint32_t> patch_grid, uint64_t budget,
                                         const SamplerOptions& options, std::unique_ptr<GroupedBatchSampler>* sampler) {
  SHARDPACK_RETURN_IF_ERROR(EpochSampler::CheckOptions(options));
  // (Each epoch packs its own order, so its batch count is known only by walking it.)
  std::unique_ptr<GroupedBatchSampler> s(
      new GroupedBatchSampler(std::move(order), options, BucketTail::kPartial, /*per_epoch_counts=*/true));
  s->patch_grid_ = std::move(patch_grid);
  s->budget_ = budget;
  if (s->global_batches(0) == 0) return Status::InvalidArgument("an empty dataset makes no batch");
  *sampler = std::move(s);
  return Status::OK();
}

uint64_t GroupedBatchSampler::order_size() const { return order_.epoch_size(); }

std::vector<uint64_t> GroupedBatchSampler::BucketSizes(uint64_t epoch) const {
  if (!per_epoch_counts_) return sizes_;
  std::vector<uint64_t> sizes(buckets_, 0);
  std::vector<uint64_t> chunk;
  std::unique_ptr<EpochOrder> order = order_.NewOrder(epoch);
  for (uint64_t p = 0; p < order_size(); p += chunk.size()) {
    chunk.clear();
    order->Fill(p, std::min<uint64_t>(order_size(), p + 4096), &chunk);
    for (const uint64_t index : chunk) {
      if (bucket_of_[index] < buckets_) ++sizes[bucket_of_[index]];  // (kNoLoaderBucket: left out)
    }
  }
  return sizes;
}

uint64_t GroupedBatchSampler::GlobalBatches(const std::vector<uint64_t>& sizes) const {
  uint64_t global = 0;
  for (const uint64_t n : sizes) {
    global += n / options_.batch_size;
    if (n % options_.batch_size != 0 && tail_ != BucketTail::kDrop) ++global;
  }
  return global;
}

uint64_t GroupedBatchSampler::global_batches(uint64_t epoch) const {
  std::lock_guard<std::mutex> lock(counts_mu_);
  for (const auto& [e, n] : counts_) {
    if (e == epoch) return n;
  }
  uint64_t n = 0;
  if (budget_ != 0) {  // the packing is known only by walking it
    Walk walk(*this, epoch);
    std::vector<uint64_t> indices;
    uint32_t bucket = 0;
    while (walk.Next(&indices, &bucket)) ++n;
  } else {
    n = GlobalBatches(BucketSizes(epoch));
  }
  if (counts_.size() >= 4) counts_.erase(counts_.begin());
  counts_.emplace_back(epoch, n);
  return n;
}

uint64_t GroupedBatchSampler::Rounds(uint64_t global, uint64_t start) const {
  const uint64_t rest = global > start ? global - start : 0, world = options_.world_size;
  return tail_ == BucketTail::kDrop ? rest / world : (rest + world - 1) / world;
}

uint64_t GroupedBatchSampler::rank_batches(uint64_t epoch) const {
  return Rounds(global_batches(epoch), epoch == start_epoch_ ? start_ : 0);
}

uint64_t GroupedBatchSampler::worker_batches(uint64_t epoch) const {
  const uint64_t r = rank_batches(epoch), w = options_.num_workers;
  return r / w + (options_.worker < r % w ? 1 : 0);
}

Status GroupedBatchSampler::SetEpochStart(uint64_t epoch, uint64_t batches_done) {
  const uint64_t global = global_batches(epoch);
  if (batches_done > global) {
    return Status::InvalidArgument("resuming after " + std::to_string(batches_done) + " batches of an epoch of " +
                                   std::to_string(global));
  }
  start_epoch_ = epoch;
  start_ = batches_done;
  return Status::OK();
}

uint64_t GroupedBatchSampler::BatchesConsumed(uint64_t epoch, uint64_t rank_batches_done) const {
  const uint64_t start = epoch == start_epoch_ ? start_ : 0;
  const uint64_t k = std::min(rank_batches_done, rank_batches(epoch));
  return std::min(global_batches(epoch), start + k * options_.world_size);
}

void GroupedBatchSampler::Batch(uint64_t epoch, uint64_t b, std::vector<uint64_t>* indices, uint32_t* bucket,
                                uint64_t* global) {
  const SamplerOptions& o = options_;
  const uint64_t start = epoch == start_epoch_ ? start_ : 0;
  uint64_t g = start + (b * o.num_workers + o.worker) * o.world_size + o.rank;
  const uint64_t total = global_batches(epoch);
  *global = g;
  if (g >= total) g %= total;  // a completed last round: the epoch's first batches again
  if (walk_ == nullptr || walk_->epoch() != epoch || walk_->next() > g) walk_ = std::make_unique<Walk>(*this, epoch);
  indices->clear();
  while (walk_->next() <= g) {
    if (!walk_->Next(indices, bucket)) break;  // (never: g is below the epoch's batches)
  }
}

}  // namespace shardpack
