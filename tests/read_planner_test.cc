// ReadPlanner (ops/read/read_planner.h): planning a window of batches at a time gives the reads of
// the whole-epoch plan, transcribed here from the rules the loader documents (drains just before
// the batch that first finds the stream past their shard, in the stream's order; positions count
// drained samples and then the batch's), and every read of a shard lies inside the plan the reader
// holds when it happens; with a walk ahead too short to keep everything, each sample is still read
// exactly once, from its shard when it was not kept.
#include "ops/read/read_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace shardpack {
namespace {

struct Read {
  size_t shard;
  uint64_t position;
};

// The whole epoch's plan, as the loader made it before windows: per batch its drains and position.
struct Reference {
  std::vector<std::vector<ReadPlanner::Drain>> drains;  // by batch - first_batch
  std::vector<uint64_t> positions;
};

Reference WholeEpoch(const EpochSampler& sampler, const std::vector<uint64_t>& sizes, uint64_t epoch,
                     uint64_t first_batch) {
  EpochSampler walk = sampler;
  std::vector<uint64_t> ends(sizes.size());
  std::partial_sum(sizes.begin(), sizes.end(), ends.begin());
  const auto shard_of = [&](uint64_t i) {
    return size_t(std::upper_bound(ends.begin(), ends.end(), i) - ends.begin());
  };
  const std::vector<uint64_t> passed = sampler.ShardsPassed(epoch);
  std::vector<uint64_t> drain_at(sizes.size(), std::numeric_limits<uint64_t>::max());
  for (size_t s = 0; s < sizes.size(); ++s) {
    for (uint64_t b = first_batch; b < sampler.worker_batches(); ++b) {
      uint64_t begin = 0, end = 0;
      sampler.BatchRange(b, &begin, &end);
      if (passed[s] <= begin) {
        drain_at[s] = b;
        break;
      }
    }
  }
  const uint64_t n = sampler.worker_batches() - first_batch;
  std::vector<std::vector<uint64_t>> batches(n), kept(sizes.size());
  for (uint64_t b = first_batch; b < sampler.worker_batches(); ++b) {
    walk.Batch(epoch, b, &batches[b - first_batch]);
    for (const uint64_t i : batches[b - first_batch]) {
      if (b >= drain_at[shard_of(i)]) kept[shard_of(i)].push_back(i);
    }
  }
  Reference r;
  r.drains.resize(n);
  for (const uint64_t s : sampler.ShardOrder(epoch)) {
    if (!kept[s].empty()) r.drains[drain_at[s] - first_batch].push_back({size_t(s), 0, kept[s]});
  }
  uint64_t position = 0;
  for (uint64_t b = 0; b < n; ++b) {
    for (ReadPlanner::Drain& d : r.drains[b]) d.position = position, position += d.indices.size();
    r.positions.push_back(position);
    position += batches[b].size();
  }
  return r;
}

class ReadPlannerTest : public testing::Test {
 protected:
  void SetUp() override {
    for (int s = 0; s < 40; ++s) sizes_.push_back(5 + uint64_t(s * 7) % 11);
    std::vector<ShardEntry> entries;
    for (const uint64_t size : sizes_) {
      entries.emplace_back();
      entries.back().samples = size;
    }
    shards_ = ShardTable(entries);
    total_ = std::accumulate(sizes_.begin(), sizes_.end(), uint64_t(0));
    o_.batch_size = 4;
    o_.shuffle_buffer = 16;
    o_.seed = 9;
    o_.world_size = 2;
    o_.rank = 1;
    o_.num_workers = 2;
    o_.worker = 0;
    ASSERT_TRUE(EpochSampler::Create(total_, o_, &sampler_, sizes_).ok());
  }

  bool Covered(const std::vector<ShardUse>& plan, size_t shard, uint64_t position) {
    return std::any_of(plan.begin(), plan.end(), [&](const ShardUse& u) {
      return u.shard == shard && u.first <= position && position <= u.last;
    });
  }

  std::vector<uint64_t> sizes_;
  ShardTable shards_;  // the same sizes, as a reader keeps a manifest's list
  uint64_t total_ = 0;
  SamplerOptions o_;
  EpochSampler sampler_;
};

TEST_F(ReadPlannerTest, WindowsGiveTheWholeEpochsDrainsAndPositionsAndCoverEveryRead) {
  std::vector<uint64_t> ends(sizes_.size());
  std::partial_sum(sizes_.begin(), sizes_.end(), ends.begin());
  const auto shard_of = [&](uint64_t i) {
    return size_t(std::upper_bound(ends.begin(), ends.end(), i) - ends.begin());
  };
  for (const uint64_t first_batch : {uint64_t(0), uint64_t(5)}) {
    const Reference ref = WholeEpoch(sampler_, sizes_, 2, first_batch);
    size_t drains = 0;
    for (const auto& d : ref.drains) drains += d.size();
    ASSERT_GT(drains, 10u);  // the streaming shuffle leaves samples waiting: drains to check
    for (const uint64_t window : {1, 3, 7, 1000}) {
      SCOPED_TRACE("first batch " + std::to_string(first_batch) + ", window " + std::to_string(window));
      ReadPlanner planner(sampler_, shards_, o_, true, 2, first_batch, window);
      EpochSampler walk = sampler_;
      std::vector<ShardUse> plan;
      uint64_t plan_position = 0, plans = 0;
      std::vector<uint64_t> batch;
      for (uint64_t b = first_batch; b < sampler_.worker_batches(); ++b) {
        std::vector<ShardUse> next;
        uint64_t position = 0;
        if (planner.Advance(b, &next, &position)) {
          EXPECT_TRUE(plans == 0 || position >= plan_position) << "the reads never move back";
          plan = std::move(next), plan_position = position, ++plans;
        }
        const std::vector<ReadPlanner::Drain> got = planner.TakeDrains(b);
        const std::vector<ReadPlanner::Drain>& want = ref.drains[b - first_batch];
        ASSERT_EQ(got.size(), want.size()) << "batch " << b;
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].shard, want[i].shard);
          EXPECT_EQ(got[i].position, want[i].position);
          EXPECT_EQ(got[i].indices, want[i].indices);
          for (size_t j = 0; j < got[i].indices.size(); ++j) {
            EXPECT_TRUE(Covered(plan, got[i].shard, got[i].position + j)) << "drain of shard " << got[i].shard;
          }
        }
        ASSERT_EQ(planner.BatchPosition(b), ref.positions[b - first_batch]) << "batch " << b;
        // A sample not kept by an earlier drain is read from its shard, inside the plan.
        walk.Batch(2, b, &batch);
        for (size_t i = 0; i < batch.size(); ++i) {
          bool kept = false;
          for (uint64_t c = first_batch; c <= b && !kept; ++c) {
            for (const ReadPlanner::Drain& d : ref.drains[c - first_batch]) {
              kept = kept || std::count(d.indices.begin(), d.indices.end(), batch[i]) > 0;
            }
          }
          if (!kept) {
            EXPECT_TRUE(Covered(plan, shard_of(batch[i]), planner.BatchPosition(b) + i)) << batch[i];
          }
        }
      }
      const uint64_t windows = (sampler_.worker_batches() - first_batch + window - 1) / window;
      EXPECT_EQ(plans, 1 + (windows > 2 ? windows - 2 : 0)) << "one plan per window entered (the first covers two)";
    }
  }
}

TEST_F(ReadPlannerTest, SamplesTakenPastTheHorizonAreReadFromTheirShardOnce) {
  std::vector<uint64_t> ends(sizes_.size());
  std::partial_sum(sizes_.begin(), sizes_.end(), ends.begin());
  const auto shard_of = [&](uint64_t i) {
    return size_t(std::upper_bound(ends.begin(), ends.end(), i) - ends.begin());
  };
  ReadPlanner planner(sampler_, shards_, o_, true, 0, 0, 2, /*horizon_buffers=*/0);
  const Reference ref = WholeEpoch(sampler_, sizes_, 0, 0);
  std::map<uint64_t, int> kept_whole_epoch;
  for (const auto& drains : ref.drains) {
    for (const ReadPlanner::Drain& d : drains) {
      for (const uint64_t i : d.indices) ++kept_whole_epoch[i];
    }
  }
  EpochSampler walk = sampler_;
  std::vector<ShardUse> plan;
  std::map<uint64_t, int> kept, read;
  std::vector<uint64_t> batch;
  size_t missed = 0;  // kept by the whole epoch's plan, read from their shard here
  for (uint64_t b = 0; b < sampler_.worker_batches(); ++b) {
    std::vector<ShardUse> next;
    uint64_t position = 0;
    if (planner.Advance(b, &next, &position)) plan = std::move(next);
    for (const ReadPlanner::Drain& d : planner.TakeDrains(b)) {
      for (const uint64_t i : d.indices) ++kept[i];
    }
    walk.Batch(0, b, &batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      ++read[batch[i]];
      if (kept.count(batch[i]) > 0) continue;
      // Not kept: read from its shard, which the plan must hold at this position.
      EXPECT_TRUE(Covered(plan, shard_of(batch[i]), planner.BatchPosition(b) + i)) << batch[i];
      missed += kept_whole_epoch.count(batch[i]);
    }
  }
  for (const auto& [index, times] : kept) EXPECT_EQ(times, 1) << index;
  for (const auto& [index, times] : read) EXPECT_EQ(times, 1) << index;
  uint64_t share = 0;  // this worker's samples
  for (uint64_t b = 0; b < sampler_.worker_batches(); ++b) {
    uint64_t begin = 0, end = 0;
    sampler_.BatchRange(b, &begin, &end);
    share += end - begin;
  }
  EXPECT_EQ(read.size(), share);
  EXPECT_GT(kept.size(), 0u);
  EXPECT_GT(missed, 0u) << "the short walk ahead must miss some, or this test tests nothing";
}

}  // namespace
}  // namespace shardpack
