#include "formats/common/shard_index_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace shardpack {
namespace {

struct FakeIndex {
  size_t shard = 0;
  uint64_t memory_bytes() const { return 100; }
};

ShardIndexCache<FakeIndex>::Load Loader(std::atomic<int>* loads) {
  return [loads](size_t shard, std::unique_ptr<FakeIndex>* index) {
    ++*loads;
    if (shard == 99) return Status::DataLoss("shard 99 is damaged");
    *index = std::make_unique<FakeIndex>(FakeIndex{shard});
    return Status::OK();
  };
}

// A bound of three indexes: the least recently used goes, one still held stays valid, a failed
// load keeps nothing and says why.
TEST(ShardIndexCache, KeepsTheMostRecentlyUsedWithinTheBound) {
  std::atomic<int> loads{0};
  ShardIndexCache<FakeIndex> cache(100, 300, Loader(&loads));
  std::shared_ptr<const FakeIndex> got, held;
  for (size_t s : {0, 1, 2}) ASSERT_TRUE(cache.Get(s, &got).ok());
  ASSERT_TRUE(cache.Get(1, &held).ok());
  ASSERT_TRUE(cache.Get(0, &got).ok());  // kept: no load; 2 is now the least recently used
  EXPECT_EQ(loads, 3);
  ASSERT_TRUE(cache.Get(3, &got).ok());  // over the bound: 2 goes
  EXPECT_EQ(cache.kept(), 3u);
  ASSERT_TRUE(cache.Get(1, &got).ok());
  ASSERT_TRUE(cache.Get(0, &got).ok());
  EXPECT_EQ(loads, 4);
  ASSERT_TRUE(cache.Get(2, &got).ok());  // loaded again
  EXPECT_EQ(loads, 5);
  EXPECT_EQ(got->shard, 2u);
  EXPECT_EQ(held->shard, 1u);
  const Status s = cache.Get(99, &got);
  EXPECT_EQ(s.message(), "shard 99 is damaged");
  EXPECT_EQ(cache.kept(), 3u);
}

// Eight threads asking for 200 shards at random through a bound of ten: every answer is the shard
// asked for, and the bound holds (ThreadSanitizer runs this too).
TEST(ShardIndexCache, ManyThreadsGetTheirShardsWithinTheBound) {
  std::atomic<int> loads{0};
  ShardIndexCache<FakeIndex> cache(200, 1000, Loader(&loads));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 5000; ++i) {
        const size_t shard = rng() % 98;
        std::shared_ptr<const FakeIndex> got;
        if (!cache.Get(shard, &got).ok() || got->shard != shard) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(cache.kept(), 10u);
  EXPECT_GE(cache.loads(), 98u);
  EXPECT_EQ(loads.load(), int(cache.loads()));  // every load kept: none made twice at once
}

// Eight threads asking at once for one shard whose load takes a while: it is loaded once.
TEST(ShardIndexCache, ThreadsAskingForTheSameShardShareOneLoad) {
  std::atomic<int> loads{0};
  ShardIndexCache<FakeIndex> cache(4, 1000, [&](size_t shard, std::unique_ptr<FakeIndex>* index) {
    ++loads;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    *index = std::make_unique<FakeIndex>(FakeIndex{shard});
    return Status::OK();
  });
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::shared_ptr<const FakeIndex> got;
      if (!cache.Get(2, &got).ok() || got->shard != 2) ++wrong;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace shardpack
