#include "ops/read/read_planner.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardpack {

ReadPlanner::ReadPlanner(const EpochSampler& sampler, const ShardTable& shards, const SamplerOptions& options,
                         bool keep_waiting, uint64_t epoch, uint64_t first_batch, uint64_t window_batches,
                         uint64_t horizon_buffers)
    : plan_sampler_(sampler),
      keep_sampler_(sampler),
      epoch_(epoch),
      first_batch_(first_batch),
      end_batch_(sampler.worker_batches()),
      window_(std::max<uint64_t>(1, window_batches)),
      keep_waiting_(keep_waiting),
      horizon_(horizon_buffers * options.shuffle_buffer),
      locator_(shards),
      shard_count_(shards.size()),
      base_batch_(first_batch) {
  for (const uint64_t n : shards.sample_counts()) samples_ += n;
  const std::vector<uint64_t> passed = keep_waiting_ ? sampler.ShardsPassed(epoch) : std::vector<uint64_t>();
  keep_waiting_ = passed.size() == shard_count_ && !passed.empty();
  if (!keep_waiting_) return;
  // Each shard's drain: the first of this worker's batches that starts where the stream has left
  // it. `passed` does not decrease along the stream's order (each shard's stream range ends later
  // than the one before), so one walk over the batches places them all.
  stream_order_ = sampler.ShardOrder(epoch);
  drain_at_.assign(passed.size(), std::numeric_limits<uint64_t>::max());
  drained_.assign(passed.size(), false);
  size_t next = 0;
  for (uint64_t b = first_batch; b < end_batch_ && next < stream_order_.size(); ++b) {
    uint64_t begin = 0, end = 0;
    sampler.BatchRange(b, &begin, &end);
    for (; next < stream_order_.size() && passed[stream_order_[next]] <= begin; ++next) {
      drain_at_[stream_order_[next]] = b;
    }
  }
  keep_next_ = first_batch;
}

uint64_t ReadPlanner::Window(uint64_t dataset_size, size_t shard_count, const SamplerOptions& o,
                             uint64_t shards_ahead) {
  const double per_batch = std::max(1.0, double(o.batch_size) * o.world_size * o.num_workers);
  const double per_shard = shard_count == 0 ? double(dataset_size) : double(dataset_size) / double(shard_count);
  const double batches = std::ceil(double(shards_ahead) * per_shard / per_batch);
  return uint64_t(std::clamp(batches, 8.0, double(uint64_t(1) << 40)));
}

size_t ReadPlanner::ShardOf(uint64_t index) const {
  if (index >= samples_) return shard_count_;
  size_t shard = 0;
  uint64_t local = 0;
  locator_.Locate(index, &shard, &local);
  return shard;
}

bool ReadPlanner::Advance(uint64_t b, std::vector<ShardUse>* uses, uint64_t* position) {
  if (b < first_batch_ || b >= end_batch_) return false;
  const uint64_t k = (b - first_batch_) / window_;
  const uint64_t last_window = (end_batch_ - 1 - first_batch_) / window_;
  bool planned = false;
  for (; next_window_ <= std::min(k + 1, last_window); ++next_window_) {
    PlanWindow(next_window_);
    planned = true;
  }
  if (!planned) return false;
  // What the producer has left behind goes; the plan is the window it is in and the next.
  while (!windows_.empty() && windows_.front().k < k) windows_.pop_front();
  for (const uint64_t start = first_batch_ + k * window_; base_batch_ < start; ++base_batch_) {
    drains_.pop_front();
    positions_.pop_front();
  }
  std::unordered_map<uint32_t, ShardUse> merged;
  for (const PlannedWindow& w : windows_) {
    for (const ShardUse& u : w.uses) {
      const auto [it, fresh] = merged.try_emplace(u.shard, u);
      if (!fresh) it->second.last = u.last;  // windows in order: the later one's last use
    }
  }
  uses->clear();
  for (const auto& [shard, use] : merged) uses->push_back(use);
  std::sort(uses->begin(), uses->end(), [](const ShardUse& x, const ShardUse& y) { return x.first < y.first; });
  const std::vector<Drain>& before = drains_[b - base_batch_];
  *position = before.empty() ? positions_[b - base_batch_] : before.front().position;
  return true;
}

std::vector<ReadPlanner::Drain> ReadPlanner::TakeDrains(uint64_t b) {
  if (b < base_batch_ || b - base_batch_ >= drains_.size()) return {};
  return std::move(drains_[b - base_batch_]);
}

uint64_t ReadPlanner::BatchPosition(uint64_t b) const {
  if (b < base_batch_ || b - base_batch_ >= positions_.size()) return position_;
  return positions_[b - base_batch_];
}

void ReadPlanner::WalkAhead(uint64_t position) {
  for (; keep_next_ < end_batch_; ++keep_next_) {
    uint64_t begin = 0, end = 0;
    keep_sampler_.BatchRange(keep_next_, &begin, &end);
    if (begin >= position) break;
    keep_sampler_.Batch(epoch_, keep_next_, &indices_);
    for (const uint64_t index : indices_) {
      const size_t shard = ShardOf(index);
      if (shard >= drain_at_.size() || keep_next_ < drain_at_[shard]) continue;
      if (drained_[shard]) {
        missed_.insert(index);
      } else {
        waiting_[shard].push_back(index);
      }
    }
  }
}

void ReadPlanner::PlanWindow(uint64_t k) {
  const uint64_t w0 = first_batch_ + k * window_, w1 = std::min(end_batch_, w0 + window_);
  drains_.resize(w1 - base_batch_);
  if (keep_waiting_) {
    uint64_t begin = 0, end = 0;
    plan_sampler_.BatchRange(w1 - 1, &begin, &end);
    WalkAhead(end + horizon_);
    // The drains of the shards the stream leaves in this window, in the stream's order, each with
    // the samples this worker takes after that.
    for (; next_drain_ < stream_order_.size() && drain_at_[stream_order_[next_drain_]] < w1; ++next_drain_) {
      const size_t shard = size_t(stream_order_[next_drain_]);
      drained_[shard] = true;
      const auto it = waiting_.find(shard);
      if (it == waiting_.end()) continue;
      drains_[drain_at_[shard] - base_batch_].push_back({shard, 0, std::move(it->second)});
      waiting_.erase(it);
    }
  }
  std::unordered_map<uint32_t, ShardUse> uses;
  const auto use = [&](size_t shard, uint64_t position) {
    const auto [it, fresh] = uses.try_emplace(uint32_t(shard), ShardUse{uint32_t(shard), position, position});
    it->second.last = position;
  };
  for (uint64_t b = w0; b < w1; ++b) {
    for (Drain& d : drains_[b - base_batch_]) {
      d.position = position_;
      for (size_t i = 0; i < d.indices.size(); ++i) use(d.shard, position_++);
    }
    positions_.push_back(position_);
    plan_sampler_.Batch(epoch_, b, &indices_);
    for (const uint64_t index : indices_) {
      const size_t shard = ShardOf(index);
      if (shard < shard_count_) {
        // Read from its shard unless kept when the stream left it (missed: taken past the horizon).
        const bool kept = keep_waiting_ && b >= drain_at_[shard] && missed_.erase(index) == 0;
        if (!kept) use(shard, position_);
      }
      ++position_;
    }
  }
  PlannedWindow window;
  window.k = k;
  for (const auto& [shard, u] : uses) window.uses.push_back(u);
  windows_.push_back(std::move(window));
}

}  // namespace shardpack
