#include "shardpack/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "ops/diagnose/shuffle_quality.h"

namespace shardpack {
namespace {

EpochSampler Make(uint64_t n, SamplerOptions o) {
  EpochSampler s;
  EXPECT_TRUE(EpochSampler::Create(n, o, &s).ok());
  return s;
}

// All batches of one epoch, over every rank and worker: sample -> times seen; and batches per rank.
std::map<uint64_t, int> Epoch(uint64_t n, SamplerOptions o, uint64_t epoch, std::vector<uint64_t>* rank_batches) {
  std::map<uint64_t, int> seen;
  for (uint32_t r = 0; r < o.world_size; ++r) {
    uint64_t batches = 0;
    for (uint32_t w = 0; w < o.num_workers; ++w) {
      o.rank = r;
      o.worker = w;
      EpochSampler s = Make(n, o);
      std::vector<uint64_t> batch;
      for (uint64_t b = 0; b < s.worker_batches(); ++b, ++batches) {
        s.Batch(epoch, b, &batch);
        EXPECT_FALSE(batch.empty());
        EXPECT_LE(batch.size(), o.batch_size);
        for (uint64_t i : batch) ++seen[i];
      }
    }
    rank_batches->push_back(batches);
  }
  return seen;
}

TEST(EpochSampler, EverySampleExactlyOnceWithEqualBatchesPerRank) {
  for (uint64_t n : {1003u, 1024u, 7u, 129u}) {
    SamplerOptions o;
    o.batch_size = n == 7 ? 2 : 32;
    o.world_size = n == 7 ? 3 : 4;  // 7 and 129: the last round alone would leave a rank empty
    o.num_workers = 3;
    std::vector<uint64_t> per_rank;
    std::map<uint64_t, int> seen = Epoch(n, o, 5, &per_rank);
    EXPECT_EQ(seen.size(), n);
    for (const auto& [index, times] : seen) EXPECT_EQ(times, 1) << index;
    for (uint64_t b : per_rank) EXPECT_EQ(b, per_rank[0]);
  }
}

TEST(EpochSampler, DropLastGivesOnlyFullBatches) {
  SamplerOptions o;
  o.batch_size = 32;
  o.world_size = 4;
  o.drop_last = true;
  std::vector<uint64_t> per_rank;
  std::map<uint64_t, int> seen = Epoch(1003, o, 0, &per_rank);
  EXPECT_EQ(per_rank, (std::vector<uint64_t>{7, 7, 7, 7}));  // 1003 / 128 = 7 rounds
  EXPECT_EQ(seen.size(), 7u * 128u);
}

TEST(EpochSampler, SameSeedSameBatchesOtherEpochOtherOrder) {
  SamplerOptions o;
  o.seed = 42;
  EpochSampler a = Make(500, o), b = Make(500, o);
  EXPECT_EQ(a.Permutation(3), b.Permutation(3));
  EXPECT_NE(a.Permutation(3), a.Permutation(4));
  o.seed = 43;
  EXPECT_NE(Make(500, o).Permutation(3), a.Permutation(3));
  std::vector<uint64_t> identity(500);
  for (uint64_t i = 0; i < 500; ++i) identity[i] = i;
  EXPECT_NE(a.Permutation(0), identity);
  o.shuffle = false;
  EXPECT_EQ(Make(500, o).Permutation(9), identity);
}

// A permutation that leaves samples near where they were is no shuffle: the mean displacement of
// a uniform permutation of n is about n/3.
TEST(EpochSampler, ShuffleMovesSamplesFar) {
  SamplerOptions o;
  std::vector<uint64_t> p = Make(3000, o).Permutation(1);
  double moved = 0;
  for (uint64_t i = 0; i < p.size(); ++i) moved += std::abs(double(p[i]) - double(i));
  EXPECT_GT(moved / p.size(), 800.0);
}

// The keyed permutation mixes as a uniformly random order does: bench's statistic (the mean
// total-variation distance of a batch's shard histogram from the epoch's) over 80 shards of 50
// samples in batches of 64 equals the ideal (its expected value for a uniformly random order) within noise,
// for several seeds and epochs; a streaming shuffle with a small buffer is far above it.
TEST(EpochSampler, TheGlobalShuffleMixesAsAnIdealOneDoes) {
  const std::vector<std::vector<uint64_t>> shards = {std::vector<uint64_t>(80, 50)};
  double worst = 0;
  for (const uint64_t seed : {1, 2, 3}) {
    for (const uint64_t epoch : {0, 7}) {
      SamplerOptions o;
      o.batch_size = 64, o.seed = seed;
      ShuffleQuality q;
      ASSERT_TRUE(MeasureShuffleQuality(nullptr, shards, o, {500}, epoch, &q).ok());
      worst = std::max(worst, std::abs(q.loader - q.ideal));
      EXPECT_GT(q.buffers.at(0).second, q.ideal + 0.1);
    }
  }
  EXPECT_LT(worst, 0.015);  // one epoch's value moves by about 0.005 from seed to seed
}

// Streaming shuffle over 20 shards of 50 samples with a buffer of 64.
class StreamingShuffle : public ::testing::Test {
 protected:
  StreamingShuffle() : sizes_(20, 50) {
    o_.shuffle_buffer = 64;
    o_.seed = 11;
    EXPECT_TRUE(EpochSampler::Create(1000, o_, &sampler_, sizes_).ok());
  }
  // Where sample i enters the stream in `epoch`: shards in ShardOrder, each front to back.
  std::vector<uint64_t> StreamPositions(uint64_t epoch) const {
    std::vector<uint64_t> position(1000);
    uint64_t p = 0;
    for (uint64_t shard : sampler_.ShardOrder(epoch)) {
      for (uint64_t i = shard * 50; i < shard * 50 + 50; ++i) position[i] = p++;
    }
    return position;
  }
  SamplerOptions o_;
  std::vector<uint64_t> sizes_;
  EpochSampler sampler_;
};

TEST_F(StreamingShuffle, IsAPermutationThatReadsAheadAtMostTheBuffer) {
  for (uint64_t epoch : {0, 1, 2}) {
    const std::vector<uint64_t> order = sampler_.Permutation(epoch);
    std::vector<int> seen(1000, 0);
    for (uint64_t i : order) ++seen[i];
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 1000);
    // Output p comes from the first p + 64 samples of the stream (the buffer holds 64 when it is
    // drawn from): reads move forward through the shards, never further ahead than the buffer.
    const std::vector<uint64_t> position = StreamPositions(epoch);
    uint64_t furthest = 0;
    for (uint64_t p = 0; p < order.size(); ++p) {
      EXPECT_LT(position[order[p]], p + 64) << "output " << p;
      furthest = std::max(furthest, position[order[p]] - std::min(position[order[p]], p));
    }
    EXPECT_EQ(furthest, 63u);  // and the buffer is used in full
  }
}

// ShardsPassed: for each shard, the first output position at which its last sample has entered the
// buffer (the test above shows output p drawn from the first p + 64 stream samples, all of them
// used), by the stream positions counted here; at the position before it, it had not.
TEST_F(StreamingShuffle, ShardsPassedIsWhereTheStreamHasTakenAShardWhole) {
  for (uint64_t epoch : {0, 3}) {
    const std::vector<uint64_t> passed = sampler_.ShardsPassed(epoch), position = StreamPositions(epoch);
    ASSERT_EQ(passed.size(), 20u);
    for (uint64_t shard = 0; shard < 20; ++shard) {
      const uint64_t last = position[shard * 50 + 49];  // entered before output p when last < p + 64
      uint64_t p = 0;
      while (!(last < p + 64)) ++p;
      EXPECT_EQ(passed[shard], p) << "shard " << shard;
    }
    // Every sample of a shard taken at or after that position was in the buffer then.
    const std::vector<uint64_t> order = sampler_.Permutation(epoch);
    for (uint64_t q = 0; q < order.size(); ++q) {
      const uint64_t shard = order[q] / 50;
      if (q >= passed[shard]) {
        EXPECT_LT(position[shard * 50 + 49], q + 64);
      }
    }
  }
  SamplerOptions global = o_;
  global.shuffle_buffer = 0;
  EpochSampler g;
  ASSERT_TRUE(EpochSampler::Create(1000, global, &g, sizes_).ok());
  EXPECT_TRUE(g.ShardsPassed(0).empty());
}

// BatchRange: the span of the epoch's order each batch takes, as Batch gives it.
TEST(EpochSampler, BatchRangeIsTheSpanOfTheOrderABatchTakes) {
  SamplerOptions o;
  o.batch_size = 7, o.world_size = 3, o.rank = 2, o.num_workers = 2, o.worker = 1, o.seed = 4;
  EpochSampler s;
  ASSERT_TRUE(EpochSampler::Create(200, o, &s).ok());
  ASSERT_TRUE(s.SetEpochStart(11).ok());
  const std::vector<uint64_t> order = s.Permutation(1);
  uint64_t previous_end = 0;
  for (uint64_t b = 0; b < s.worker_batches(); ++b) {
    uint64_t begin = 0, end = 0;
    s.BatchRange(b, &begin, &end);
    std::vector<uint64_t> batch;
    s.Batch(1, b, &batch);
    EXPECT_EQ(batch, std::vector<uint64_t>(order.begin() + long(begin), order.begin() + long(end)));
    EXPECT_GE(begin, previous_end);
    EXPECT_GE(begin, 11u);
    previous_end = end;
  }
}

// An unshuffled stream fails each of these: shard order, neighbours, and the spread of each window.
TEST_F(StreamingShuffle, MixesShardOrderAndSamples) {
  const std::vector<uint64_t> shards0 = sampler_.ShardOrder(0), shards1 = sampler_.ShardOrder(1);
  std::vector<uint64_t> identity(20);
  std::iota(identity.begin(), identity.end(), uint64_t(0));
  EXPECT_NE(shards0, identity);
  EXPECT_NE(shards0, shards1);
  const std::vector<uint64_t> order = sampler_.Permutation(0);
  EXPECT_NE(order, sampler_.Permutation(1));
  int neighbours = 0;  // outputs followed by the next sample of the stream
  for (size_t p = 0; p + 1 < order.size(); ++p) neighbours += order[p + 1] == order[p] + 1;
  EXPECT_LT(neighbours, 50);  // about 1000/64 expected; 999 unshuffled
  // Descents: outputs whose successor entered the stream earlier.
  const std::vector<uint64_t> position = StreamPositions(0);
  int descents = 0;
  for (size_t p = 0; p + 1 < order.size(); ++p) descents += position[order[p + 1]] < position[order[p]];
  EXPECT_GT(descents, 350);  // about half for a random order; 0 unshuffled
  // Global shuffle and streaming shuffle differ for the same seed.
  SamplerOptions global = o_;
  global.shuffle_buffer = 0;
  EXPECT_NE(Make(1000, global).Permutation(0), order);
}

// The documented streaming rule, written here from its text (sampler.h) over an array: the shards
// in ShardOrder, each front to back, through a buffer of K; a full buffer swaps the entering sample
// for one drawn with rng() % K, which is output; at the stream's end the buffer is shuffled by
// Fisher-Yates (std::swap(v[i-1], v[rng() % i]) for i from its size down to 2) and emptied.
std::vector<uint64_t> ReferenceStream(const std::vector<uint64_t>& shard_order, uint64_t shard_size, uint64_t k,
                                      std::mt19937_64 rng) {
  std::vector<uint64_t> order, buffer;
  for (const uint64_t s : shard_order) {
    for (uint64_t i = s * shard_size; i < (s + 1) * shard_size; ++i) {
      if (buffer.size() < k) {
        buffer.push_back(i);
        continue;
      }
      uint64_t& slot = buffer[rng() % k];
      order.push_back(slot);
      slot = i;
    }
  }
  for (uint64_t i = buffer.size(); i > 1; --i) std::swap(buffer[i - 1], buffer[rng() % i]);
  order.insert(order.end(), buffer.begin(), buffer.end());
  return order;
}

// The stream computed position by position equals the rule over an array (the order of version 1,
// kept), whichever way the positions are asked: front to back in pieces, skipping, or going back.
TEST_F(StreamingShuffle, StreamedOrderEqualsTheRuleOverAnArrayAskedInAnyOrder) {
  for (uint64_t epoch : {0, 5}) {
    uint64_t z = o_.seed + 0x9E3779B97F4A7C15ull * (epoch + 1);  // sampler.h: (seed, epoch) via splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    const std::vector<uint64_t> reference =
        ReferenceStream(sampler_.ShardOrder(epoch), 50, 64, std::mt19937_64(z ^ (z >> 31)));
    ASSERT_EQ(sampler_.Permutation(epoch), reference);
    std::unique_ptr<EpochOrder> order = sampler_.NewOrder(epoch);
    std::mt19937_64 rng(epoch);
    for (int k = 0; k < 200; ++k) {
      const uint64_t begin = rng() % 1000, end = std::min<uint64_t>(1000, begin + rng() % 40);
      std::vector<uint64_t> piece;
      order->Fill(begin, end, &piece);
      ASSERT_EQ(piece, std::vector<uint64_t>(reference.begin() + long(begin), reference.begin() + long(end)));
    }
  }
}

// A billion samples: any batch of the global shuffle comes without an array of the epoch (which
// would be 8 GB, past what a sanitizer build may allocate), its samples in range and all different.
TEST(EpochSampler, BatchesOfABillionSamplesNeedNoArrayOfThem) {
  SamplerOptions o;
  o.batch_size = 256, o.world_size = 8, o.rank = 5, o.seed = 3;
  EpochSampler s;
  ASSERT_TRUE(EpochSampler::Create(1000000000, o, &s).ok());
  std::set<uint64_t> seen;
  std::vector<uint64_t> batch;
  for (const uint64_t b : {0ull, 1ull, 200000ull, 488280ull}) {
    s.Batch(2, b, &batch);
    ASSERT_EQ(batch.size(), 256u);
    for (const uint64_t i : batch) {
      EXPECT_LT(i, 1000000000u);
      EXPECT_TRUE(seen.insert(i).second);
    }
  }
}

TEST_F(StreamingShuffle, RanksStillCoverTheEpochOnceWithEqualBatches) {
  SamplerOptions o = o_;
  o.batch_size = 16;
  o.world_size = 3;
  o.num_workers = 2;
  std::map<uint64_t, int> seen;
  std::vector<uint64_t> per_rank;
  for (uint32_t r = 0; r < 3; ++r) {
    uint64_t batches = 0;
    for (uint32_t w = 0; w < 2; ++w) {
      o.rank = r;
      o.worker = w;
      EpochSampler s;
      ASSERT_TRUE(EpochSampler::Create(1000, o, &s, sizes_).ok());
      std::vector<uint64_t> batch;
      for (uint64_t b = 0; b < s.worker_batches(); ++b, ++batches) {
        s.Batch(4, b, &batch);
        for (uint64_t i : batch) ++seen[i];
      }
    }
    per_rank.push_back(batches);
  }
  EXPECT_EQ(seen.size(), 1000u);
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << i;
  EXPECT_EQ(per_rank, std::vector<uint64_t>(3, per_rank[0]));
}

TEST(EpochSampler, ResumingAtBatchBGivesTheSameBatches) {
  SamplerOptions o;
  o.batch_size = 10;
  EpochSampler s = Make(95, o);
  std::vector<std::vector<uint64_t>> uninterrupted(s.worker_batches());
  for (uint64_t b = 0; b < s.worker_batches(); ++b) s.Batch(2, b, &uninterrupted[b]);
  EpochSampler resumed = Make(95, o);  // a new process, same options
  for (uint64_t b = 6; b < resumed.worker_batches(); ++b) {
    std::vector<uint64_t> batch;
    resumed.Batch(2, b, &batch);
    EXPECT_EQ(batch, uninterrupted[b]);
  }
}

// Elastic resume: ranks of one run take their first k batches; a run with another world size and
// batch size continues after SamplesConsumed(k). Over both, every sample exactly once.
TEST(EpochSampler, ElasticResumeOnOtherRanksTakesEverySampleOnce) {
  const uint64_t n = 1003;
  for (uint64_t k : {0u, 1u, 7u, 12u, 13u}) {  // 13: into the tail rounds of 4 x 20 over 1003 samples
    SamplerOptions first;
    first.batch_size = 20;
    first.world_size = 4;
    first.seed = 3;
    std::map<uint64_t, int> seen;
    uint64_t consumed = 0;
    for (uint32_t r = 0; r < first.world_size; ++r) {
      first.rank = r;
      EpochSampler s = Make(n, first);
      ASSERT_LE(k, s.rank_batches());
      std::vector<uint64_t> batch;
      for (uint64_t b = 0; b < k; ++b) {
        s.Batch(2, b, &batch);
        for (uint64_t i : batch) ++seen[i];
      }
      consumed = s.SamplesConsumed(k);
    }
    EXPECT_EQ(consumed, seen.size()) << "k " << k;  // the samples taken, as a count
    for (auto [world, batch_size] : {std::pair<uint32_t, uint64_t>{2, 40}, {8, 10}, {3, 7}}) {
      SCOPED_TRACE("k " + std::to_string(k) + ", resumed on " + std::to_string(world) + " ranks of " +
                   std::to_string(batch_size));
      std::map<uint64_t, int> all = seen;
      SamplerOptions next = first;
      next.world_size = world;
      next.batch_size = batch_size;
      std::vector<uint64_t> batches_per_rank;
      for (uint32_t r = 0; r < world; ++r) {
        next.rank = r;
        EpochSampler s = Make(n, next);
        ASSERT_TRUE(s.SetEpochStart(consumed).ok());
        batches_per_rank.push_back(s.rank_batches());
        std::vector<uint64_t> batch;
        for (uint64_t b = 0; b < s.worker_batches(); ++b) {
          s.Batch(2, b, &batch);
          EXPECT_FALSE(batch.empty());
          for (uint64_t i : batch) ++all[i];
        }
      }
      EXPECT_EQ(all.size(), n);
      for (const auto& [index, times] : all) EXPECT_EQ(times, 1) << index;
      for (uint64_t b : batches_per_rank) EXPECT_EQ(b, batches_per_rank[0]);
    }
  }
  EpochSampler s = Make(n, SamplerOptions());
  EXPECT_EQ(s.SetEpochStart(n + 1).message(), "resuming after 1004 samples of an epoch of 1003");
  ASSERT_TRUE(s.SetEpochStart(n).ok());
  EXPECT_EQ(s.rank_batches(), 0u);
}

TEST(EpochSampler, RefusesImpossibleOptions) {
  EpochSampler s;
  SamplerOptions o;
  o.batch_size = 0;
  EXPECT_EQ(EpochSampler::Create(10, o, &s).message(), "batch size must be at least 1");
  o.batch_size = 4;
  o.rank = 2;
  o.world_size = 2;
  EXPECT_EQ(EpochSampler::Create(10, o, &s).message(), "rank 2 is not below world size 2");
  o.rank = 0;
  o.world_size = 20;
  EXPECT_EQ(EpochSampler::Create(10, o, &s).message(),
            "a dataset of 10 samples cannot give each of 20 ranks a batch; use drop_last or fewer ranks");
  o.world_size = 4;
  o.batch_size = 1;
  EXPECT_EQ(EpochSampler::Create(10, o, &s).message(),
            "a dataset of 10 samples cannot give each of 4 ranks the same number of batches of 1; use drop_last or "
            "another batch size");
  // After an elastic resume the message counts what is left of the epoch, not the dataset.
  ASSERT_TRUE(EpochSampler::Create(12, o, &s).ok());
  EXPECT_EQ(s.SetEpochStart(2).message(),
            "the 10 samples left of the epoch (resumed after 2) cannot give each of 4 ranks the same number of "
            "batches of 1; use drop_last or another batch size");
}

}  // namespace
}  // namespace shardpack
