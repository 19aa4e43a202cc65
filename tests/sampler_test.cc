#include "shardpack/sampler.h"

#include <gtest/gtest.h>

#include <map>

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
}

}  // namespace
}  // namespace shardpack
