// GroupedBatchSampler (ops/read/grouped_batch_sampler.h): the epoch's bucketed and budgeted batches,
// against walks worked out by hand from the rules docs/buckets.md states, over dataset order (no shuffle) so that every
// step can be followed on paper.
#include "ops/read/grouped_batch_sampler.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

namespace shardpack {
namespace {

// Nine samples in two buckets:  index 0 1 2 3 4 5 6 7 8
//                               bucket 0 1 0 0 1 1 0 1 0
// Batches of 2, walked in dataset order: 2 completes {0,2} (bucket 0), 4 completes {1,4} (1), 6
// completes {3,6} (0), 7 completes {5,7} (1); bucket 0's open batch {8} is the tail.
const std::vector<uint8_t> kBuckets = {0, 1, 0, 0, 1, 1, 0, 1, 0};

using Batches = std::vector<std::pair<uint32_t, std::vector<uint64_t>>>;  // (bucket, samples)

std::unique_ptr<GroupedBatchSampler> Make(BucketTail tail, uint32_t rank = 0, uint32_t world = 1, uint32_t worker = 0,
                                          uint32_t workers = 1) {
  SamplerOptions o;
  o.batch_size = 2;
  o.shuffle = false;
  EpochSampler order;
  EXPECT_TRUE(EpochSampler::Create(kBuckets.size(), o, &order).ok());
  o.rank = rank, o.world_size = world, o.worker = worker, o.num_workers = workers;
  std::unique_ptr<GroupedBatchSampler> s;
  const Status status =
      GroupedBatchSampler::Create(order, std::make_shared<const std::vector<uint8_t>>(kBuckets), 2, o, tail,
                                  /*per_epoch_counts=*/false, &s);
  EXPECT_TRUE(status.ok()) << status.message();
  return s;
}

Batches All(GroupedBatchSampler& s, uint64_t epoch = 0) {
  Batches out;
  for (uint64_t b = 0; b < s.worker_batches(epoch); ++b) {
    std::vector<uint64_t> indices;
    uint32_t bucket = 0;
    uint64_t global = 0;
    s.Batch(epoch, b, &indices, &bucket, &global);
    out.emplace_back(bucket, indices);
  }
  return out;
}

TEST(GroupedBatchSampler, BatchesCompleteInTheOrderTheWalkFillsThem) {
  auto s = Make(BucketTail::kPartial);
  EXPECT_EQ(s->global_batches(0), 5u);
  EXPECT_EQ(All(*s), (Batches{{0, {0, 2}}, {1, {1, 4}}, {0, {3, 6}}, {1, {5, 7}}, {0, {8}}}));
}

TEST(GroupedBatchSampler, TheTailIsDroppedOrPaddedWithItsBucketsFirstSamples) {
  auto drop = Make(BucketTail::kDrop);
  EXPECT_EQ(All(*drop), (Batches{{0, {0, 2}}, {1, {1, 4}}, {0, {3, 6}}, {1, {5, 7}}}));
  auto pad = Make(BucketTail::kPad);
  EXPECT_EQ(All(*pad), (Batches{{0, {0, 2}}, {1, {1, 4}}, {0, {3, 6}}, {1, {5, 7}}, {0, {8, 0}}}));
}

TEST(GroupedBatchSampler, RanksTakeTurnsAndALastRoundIsCutOrCompletedWithTheFirstBatches) {
  // Partial: 5 batches over 2 ranks, 3 rounds; rank 1's third is global batch 5, i.e. batch 0 again.
  auto r0 = Make(BucketTail::kPartial, 0, 2), r1 = Make(BucketTail::kPartial, 1, 2);
  EXPECT_EQ(All(*r0), (Batches{{0, {0, 2}}, {0, {3, 6}}, {0, {8}}}));
  EXPECT_EQ(All(*r1), (Batches{{1, {1, 4}}, {1, {5, 7}}, {0, {0, 2}}}));
  // Drop: 4 whole batches, 2 rounds.
  auto d1 = Make(BucketTail::kDrop, 1, 2);
  EXPECT_EQ(All(*d1), (Batches{{1, {1, 4}}, {1, {5, 7}}}));
  // Three ranks, partial: 5 batches, 2 rounds; rank 2 takes globals 2 and 5 (= 0).
  auto t2 = Make(BucketTail::kPartial, 2, 3);
  EXPECT_EQ(All(*t2), (Batches{{0, {3, 6}}, {0, {0, 2}}}));
  // Workers take turns within a rank: rank 0 of 2 has globals 0, 2, 4; worker 1 of 2 takes its second.
  auto w1 = Make(BucketTail::kPartial, 0, 2, 1, 2);
  EXPECT_EQ(All(*w1), (Batches{{0, {3, 6}}}));
}

TEST(GroupedBatchSampler, ElasticResumeSharesOutTheGlobalBatchesLeft) {
  // Two ranks each took one batch: globals 0 and 1 are done.
  auto r0 = Make(BucketTail::kPartial, 0, 2);
  EXPECT_EQ(r0->BatchesConsumed(0, 1), 2u);
  EXPECT_EQ(r0->BatchesConsumed(0, 3), 5u);  // the completed last round counts no batch twice
  // One rank goes on from there alone: globals 2, 3, 4.
  auto alone = Make(BucketTail::kPartial);
  ASSERT_TRUE(alone->SetEpochStart(0, 2).ok());
  EXPECT_EQ(alone->rank_batches(0), 3u);
  EXPECT_EQ(All(*alone), (Batches{{0, {3, 6}}, {1, {5, 7}}, {0, {8}}}));
  EXPECT_EQ(alone->rank_batches(1), 5u);  // the next epoch is whole again
  const Status past = alone->SetEpochStart(0, 6);
  EXPECT_EQ(past.message(), "resuming after 6 batches of an epoch of 5");
}

TEST(GroupedBatchSampler, AskingBehindTheWalkStartsItAgainWithTheSameBatches) {
  auto s = Make(BucketTail::kPartial);
  std::vector<uint64_t> indices;
  uint32_t bucket = 0;
  uint64_t global = 0;
  s->Batch(0, 3, &indices, &bucket, &global);
  EXPECT_EQ(indices, (std::vector<uint64_t>{5, 7}));
  s->Batch(0, 1, &indices, &bucket, &global);
  EXPECT_EQ(indices, (std::vector<uint64_t>{1, 4}));
  EXPECT_EQ(bucket, 1u);
  EXPECT_EQ(global, 1u);
}

TEST(GroupedBatchSampler, AnEpochWithoutABatchIsRefusedWithTheWayOut) {
  SamplerOptions o;
  o.batch_size = 8;
  EpochSampler order;
  ASSERT_TRUE(EpochSampler::Create(kBuckets.size(), o, &order).ok());
  std::unique_ptr<GroupedBatchSampler> s;
  const Status empty = GroupedBatchSampler::Create(order, std::make_shared<const std::vector<uint8_t>>(kBuckets), 2, o,
                                                   BucketTail::kDrop, false, &s);
  EXPECT_EQ(empty.message(),
            "no bucket holds a whole batch of 8 images, and bucket_tail=drop leaves out the smaller ones: every "
            "epoch would be empty. Use a smaller batch size, fewer buckets, or bucket_tail=partial or pad");
  o.batch_size = 2;
  o.world_size = 5;
  const Status few = GroupedBatchSampler::Create(order, std::make_shared<const std::vector<uint8_t>>(kBuckets), 2, o,
                                                 BucketTail::kDrop, false, &s);
  EXPECT_EQ(few.message(),
            "the buckets make 4 whole batches of 2, fewer than the 5 ranks: with bucket_tail=drop some rank would "
            "get none. Use a smaller batch size, or bucket_tail=partial or pad");
}

std::vector<std::vector<uint64_t>> Budgeted(const std::vector<uint32_t>& tokens, uint64_t budget, uint32_t rank = 0,
                                            uint32_t world = 1) {
  SamplerOptions o;
  o.shuffle = false;
  EpochSampler order;
  EXPECT_TRUE(EpochSampler::Create(tokens.size(), o, &order).ok());
  o.rank = rank, o.world_size = world;
  std::vector<uint32_t> grids;  // a sample of t tokens: t columns of patches in one row
  for (const uint32_t t : tokens) grids.push_back(PatchGrid(t, 1));
  std::unique_ptr<GroupedBatchSampler> s;
  const Status status =
      GroupedBatchSampler::CreateBudget(order, std::make_shared<const std::vector<uint32_t>>(grids), budget, o, &s);
  EXPECT_TRUE(status.ok()) << status.message();
  std::vector<std::vector<uint64_t>> out;
  for (const auto& [bucket, indices] : All(*s)) out.push_back(indices);
  return out;
}

TEST(GroupedBatchSampler, UnderABudgetEachSampleGoesToTheFirstOpenBatchItFits) {
  // Budget 5, tokens 4 3 1 2 2: 0 opens A (4); 1 does not fit A, opens B (3); 2 fills A (5): out;
  // 3 fills B (5): out; 4 opens C, out when the walk ends.
  EXPECT_EQ(Budgeted({4, 3, 1, 2, 2}, 5), (std::vector<std::vector<uint64_t>>{{0, 2}, {1, 3}, {4}}));
  // Nine samples of 3 open nine batches: the ninth makes more than 8 open, so the oldest, {0}, goes
  // out; the tenth (2) fits the oldest open one, {1}, and fills it; the rest go out at the end.
  std::vector<uint32_t> tokens(9, 3);
  tokens.push_back(2);
  EXPECT_EQ(Budgeted(tokens, 5), (std::vector<std::vector<uint64_t>>{{0}, {1, 9}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}));
  // Two ranks: 3 batches, 2 rounds, rank 1's second is batch 0 again.
  EXPECT_EQ(Budgeted({4, 3, 1, 2, 2}, 5, 1, 2), (std::vector<std::vector<uint64_t>>{{1, 3}, {0, 2}}));
}

}  // namespace
}  // namespace shardpack
