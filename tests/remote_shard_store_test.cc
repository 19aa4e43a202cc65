// RemoteShardStore's rules, through the HttpClient seam: a client that serves the files of a local
// folder and records every request (tests/support/folder_http_client.h). Shards are real files with their real XXH64.
#include "storage/remote_shard_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "ground/checksum.h"
#include "tests/support/folder_http_client.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;

using testing::FolderHttpClient;

class RemoteShardStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("shard_store_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "server");
    fs::create_directories(root_ / "cache");
    for (int i = 0; i < 4; ++i) {
      const std::string name = "shard-" + std::to_string(i) + ".tar";
      const std::string bytes(1000, char('a' + i));
      std::ofstream(root_ / "server" / name, std::ios::binary) << bytes;
      shards_.push_back(
          {"http://test/" + name, (root_ / "cache" / name).string(), bytes.size(), ChecksumHex(Xxh64(bytes))});
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<RemoteShardStore> NewStore(const ShardStoreOptions& options, bool in_memory = false) {
    std::vector<RemoteShard> shards = shards_;
    if (in_memory) {
      for (RemoteShard& s : shards) s.path.clear();
    }
    const std::string server = (root_ / "server").string();
    return std::make_unique<RemoteShardStore>(Env::Default(), shards, options, [this, server] {
      return std::make_unique<FolderHttpClient>(server, &log_, &mu_);
    });
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  uint64_t CachedBytes() {
    uint64_t bytes = 0;
    for (const auto& e : fs::directory_iterator(root_ / "cache")) {
      if (e.path().extension() == ".tar") bytes += fs::file_size(e.path());
    }
    return bytes;
  }
  static char FirstByte(const std::shared_ptr<const RandomAccessFile>& f) {
    char c = 0;
    EXPECT_TRUE(f->Read(0, 1, &c).ok());
    return c;
  }

  fs::path root_;
  std::vector<RemoteShard> shards_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(RemoteShardStoreTest, DownloadsAheadInThePlansOrderOneAtATime) {
  ShardStoreOptions o;
  o.downloads = 1;
  o.prefetch_shards = 4;
  auto store = NewStore(o);
  store->Plan({{2, 0, 0}, {0, 1, 5}, {3, 2, 2}, {1, 3, 3}});
  for (int i = 0; i < 500 && store->counts().fetched < 4; ++i) {  // bounded: 5 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Log(), (std::vector<std::string>{"shard-2.tar", "shard-0.tar", "shard-3.tar", "shard-1.tar"}));
  std::shared_ptr<const RandomAccessFile> last;
  ASSERT_TRUE(store->Pin(1, &last).ok());
  EXPECT_EQ(FirstByte(last), 'b');
  EXPECT_EQ(Log().size(), 4u);  // Pin found it there
}

TEST_F(RemoteShardStoreTest, WithoutAPlanOnlyWhatIsReadIsDownloaded) {
  ShardStoreOptions o;
  o.downloads = 2;
  o.prefetch_shards = 4;
  auto store = NewStore(o);
  std::shared_ptr<const RandomAccessFile> f;
  ASSERT_TRUE(store->Pin(1, &f).ok());
  EXPECT_EQ(FirstByte(f), 'b');
  EXPECT_EQ(Log(), std::vector<std::string>{"shard-1.tar"});
}

TEST_F(RemoteShardStoreTest, TheBoundEvictsWhatIsNeededLatestNeverAHeldShard) {
  ShardStoreOptions o;
  o.downloads = 1;
  o.prefetch_shards = 0;
  o.cache_limit = 2000;  // two shards
  auto store = NewStore(o);
  store->Plan({{0, 0, 9}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}});
  std::shared_ptr<const RandomAccessFile> a, b, c;
  ASSERT_TRUE(store->Pin(0, &a).ok());
  ASSERT_TRUE(store->Pin(1, &b).ok());
  // Both held: the third is fetched past the bound rather than waiting for room nobody frees.
  ASSERT_TRUE(store->Pin(2, &c).ok());
  EXPECT_EQ(CachedBytes(), 3000u);
  EXPECT_EQ(FirstByte(a), 'a');
  EXPECT_EQ(FirstByte(b), 'b');
  b.reset();
  c.reset();
  store->Reached(3);  // shards 1 and 2 are done; 0 is still read (until 9), and held
  std::shared_ptr<const RandomAccessFile> d;
  ASSERT_TRUE(store->Pin(3, &d).ok());
  EXPECT_EQ(CachedBytes(), 2000u);
  EXPECT_TRUE(fs::exists(shards_[0].path));
  EXPECT_TRUE(fs::exists(shards_[3].path));
  EXPECT_EQ(FirstByte(a), 'a');
  EXPECT_EQ(FirstByte(d), 'd');
  EXPECT_EQ(store->counts().evicted, 2u);
  EXPECT_EQ(store->counts().peak_bytes, 3000u);
}

TEST_F(RemoteShardStoreTest, StreamingDropsAShardOnceThePlanHasPassedIt) {
  ShardStoreOptions o;
  o.downloads = 2;
  o.prefetch_shards = 1;
  auto store = NewStore(o, /*in_memory=*/true);
  store->Plan({{0, 0, 1}, {1, 2, 3}, {2, 4, 5}, {3, 6, 7}});
  for (uint64_t position = 0; position < 8; ++position) {
    store->Reached(position);
    std::shared_ptr<const RandomAccessFile> f;
    ASSERT_TRUE(store->Pin(size_t(position / 2), &f).ok());
    EXPECT_EQ(FirstByte(f), char('a' + position / 2));
  }
  EXPECT_TRUE(fs::is_empty(root_ / "cache"));  // memory only
  EXPECT_EQ(Log().size(), 4u);                 // each shard once
  // At most the shard being read, the one ahead, and one more the window reached before the
  // reads moved on: never the dataset.
  EXPECT_LE(store->counts().peak_bytes, 3000u);
  EXPECT_EQ(store->counts().evicted, 3u);
}

TEST_F(RemoteShardStoreTest, AFailedDownloadFailsEveryPinUntilTheNextPlan) {
  fs::remove(root_ / "server" / "shard-1.tar");
  ShardStoreOptions o;
  o.downloads = 1;
  auto store = NewStore(o);
  std::shared_ptr<const RandomAccessFile> f;
  EXPECT_EQ(store->Pin(1, &f).message(), "http://test/shard-1.tar does not exist (HTTP 404)");
  EXPECT_EQ(store->Pin(1, &f).message(), "http://test/shard-1.tar does not exist (HTTP 404)");
  EXPECT_EQ(Log(), std::vector<std::string>{"shard-1.tar"});  // no retry storm
  store->Plan({});
  EXPECT_FALSE(store->Pin(1, &f).ok());
  EXPECT_EQ(Log().size(), 2u);
  EXPECT_FALSE(fs::exists(shards_[1].path));
}

TEST_F(RemoteShardStoreTest, ShardsAlreadyInTheCacheAreNotDownloaded) {
  fs::copy_file(root_ / "server" / "shard-2.tar", shards_[2].path);
  ShardStoreOptions o;
  auto store = NewStore(o);
  std::shared_ptr<const RandomAccessFile> f;
  ASSERT_TRUE(store->Pin(2, &f).ok());
  EXPECT_EQ(FirstByte(f), 'c');
  EXPECT_TRUE(Log().empty());
}

}  // namespace
}  // namespace shardpack
