// One cache folder, one limit, several real processes (fork): RemoteShardStores in 4 processes read
// all 16 shards, each process from another starting shard (as ranks reading different parts of
// the dataset at once do),
// through the HttpClient seam (tests/support/folder_http_client.h). The parent samples the folder
// every millisecond. The limit is the folder's: the peak stays within it plus one shard per
// process (the one a reader waits for); without a limit each shard is downloaded once per node.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "ground/checksum.h"
#include "storage/remote_shard_store.h"
#include "storage/shared_cache_space.h"
#include "tests/support/folder_http_client.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;

constexpr int kShards = 16, kProcesses = 4;
constexpr uint64_t kShardBytes = 20000;

class SharedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.Sub("server"));
    fs::create_directories(cache());
    for (int i = 0; i < kShards; ++i) {
      const std::string name = "shard-" + std::to_string(i) + ".tar";
      std::string bytes(kShardBytes, char('A' + i));
      testing::WriteFile(dir_.Sub("server/" + name), bytes);
      shards_.push_back({"http://test/" + name, cache() + "/" + name, bytes.size(), ChecksumHex(Xxh64(bytes))});
    }
  }
  std::string cache() const { return dir_.Sub("cache"); }

  // One process's reads: every shard, from shard 4k on (wrapping round), each pinned, read whole and checked; its
  // requests written to log-<k>. Exits 0 when every byte was right.
  [[noreturn]] void Child(int k, uint64_t limit) {
    std::mutex mu;
    std::vector<std::string> log;
    int bad = 0;
    {
      ShardStoreOptions o;
      o.cache_limit = limit;
      o.cache_dir = cache();
      o.downloads = 2;
      o.prefetch_shards = 4;
      const std::string server = dir_.Sub("server");
      RemoteShardStore store(Env::Default(), shards_, o,
                             [&] { return std::make_unique<testing::FolderHttpClient>(server, &log, &mu); });
      std::vector<ShardUse> plan;
      const auto shard_at = [k](int position) { return (position + 4 * k) % kShards; };
      for (int p = 0; p < kShards; ++p) plan.push_back({uint32_t(shard_at(p)), uint64_t(p), uint64_t(p)});
      store.Plan(plan);
      for (int p = 0; p < kShards; ++p) {
        const int i = shard_at(p);
        store.Reached(uint64_t(p));
        std::shared_ptr<const RandomAccessFile> f;
        std::string bytes(kShardBytes, '\0');
        Status s = store.Pin(size_t(i), &f);
        if (s.ok()) s = f->Read(0, bytes.size(), bytes.data());
        if (s.ok() && bytes != std::string(kShardBytes, char('A' + i))) s = Status::DataLoss("other bytes");
        if (!s.ok()) {
          std::fprintf(stderr, "process %d, shard %d: %s\n", k, i, s.ToString().c_str());
          ++bad;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the reads take a while
      }
      store.Reached(kShards);
    }
    std::ofstream out(dir_.Sub("log-" + std::to_string(k)));
    for (const std::string& name : log) out << name << "\n";
    out.close();
    std::_Exit(bad == 0 ? 0 : 1);
  }

  // Runs the processes; returns the peak bytes of shard files (published or being written).
  uint64_t RunProcesses(uint64_t limit) {
    std::vector<pid_t> pids;
    for (int k = 0; k < kProcesses; ++k) {
      const pid_t pid = ::fork();
      if (pid == 0) Child(k, limit);
      pids.push_back(pid);
    }
    uint64_t peak = 0;
    for (size_t done = 0; done < pids.size();) {
      uint64_t bytes = 0;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(cache(), ec)) {
        const std::string name = e.path().filename().string();
        if (name.find(".tar") != std::string::npos && name.find(".lock") == std::string::npos &&
            name.find(".checked") == std::string::npos && name.find(".pin") == std::string::npos &&
            name.find(".want") == std::string::npos) {
          // A file evicted between the listing and this look is gone: file_size answers -1 then.
          std::error_code size_ec;
          const uintmax_t size = e.file_size(size_ec);
          if (!size_ec) bytes += size;
        }
      }
      peak = std::max(peak, bytes);
      int status = 0;
      for (pid_t& pid : pids) {
        if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
          EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process read wrong bytes";
          pid = 0;
          ++done;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return peak;
  }

  std::map<std::string, int> Requests() {
    std::map<std::string, int> count;
    for (int k = 0; k < kProcesses; ++k) {
      std::ifstream in(dir_.Sub("log-" + std::to_string(k)));
      for (std::string name; std::getline(in, name);) ++count[name];
    }
    return count;
  }

  testing::TempDir dir_;
  std::vector<RemoteShard> shards_;
};

TEST_F(SharedCacheTest, TheLimitHoldsForTheFolderNotEachProcess) {
  const uint64_t limit = kShards * kShardBytes / 4;
  const uint64_t peak = RunProcesses(limit);
  EXPECT_LE(peak, limit + kProcesses * kShardBytes) << "peak " << peak << " bytes, limit " << limit;
  uint64_t left = 0;
  for (const auto& e : fs::directory_iterator(cache())) {
    if (e.path().extension() == ".tar") left += e.file_size();
  }
  EXPECT_LE(left, limit + kProcesses * kShardBytes);
  EXPECT_GE(Requests().size(), size_t(kShards));  // every shard came, some more than once
}

TEST_F(SharedCacheTest, WithoutALimitEachShardIsDownloadedOncePerNode) {
  RunProcesses(0);
  const std::map<std::string, int> requests = Requests();
  ASSERT_EQ(requests.size(), size_t(kShards));
  for (const auto& [name, n] : requests) EXPECT_EQ(n, 1) << name;
}

// Counting the folder's room takes a while (space.lock held elsewhere): a reader that asks for a
// shard while a prefetch of it is being counted waits for that prefetch.
class SlowSpaceEnv final : public testing::ForwardingEnv {
 public:
  Status LockFile(const std::string& p, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    if (p.size() >= 10 && p.compare(p.size() - 10, 10, "space.lock") == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return base_->LockFile(p, lock, mode);
  }
};

// The prefetch finds no room (both shards in the limit are held), and the reader who waited for it
// must then get the shard fetched past the limit, not wait for ever.
TEST_F(SharedCacheTest, AReaderWaitingForAPrefetchThatFindsNoRoomGetsItsShard) {
  SlowSpaceEnv env;
  std::mutex mu;
  std::vector<std::string> log;
  ShardStoreOptions o;
  o.cache_limit = 2 * kShardBytes;
  o.cache_dir = cache();
  o.downloads = 1;
  o.prefetch_shards = 3;
  const std::string server = dir_.Sub("server");
  RemoteShardStore store(&env, shards_, o,
                         [&] { return std::make_unique<testing::FolderHttpClient>(server, &log, &mu); });
  store.Plan({{0, 0, 9}, {1, 1, 9}, {2, 2, 9}, {3, 3, 9}});
  std::shared_ptr<const RandomAccessFile> a, b, c;
  ASSERT_TRUE(store.Pin(0, &a).ok());
  ASSERT_TRUE(store.Pin(1, &b).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the prefetch of 2 is counting now
  std::atomic<bool> done{false};
  std::thread reader([&] {
    EXPECT_TRUE(store.Pin(2, &c).ok());
    done = true;
  });
  for (int i = 0; i < 100 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(done) << "the reader still waits after 5 s";
  if (!done) {
    reader.detach();  // it would wait for ever: end the test process rather than hang
    std::_Exit(1);
  }
  reader.join();
  char first = 0;
  ASSERT_TRUE(c->Read(0, 1, &first).ok());
  EXPECT_EQ(first, 'C');
}

// The cache folder `cache` (made) and the paths of n shards in it, shard-I.tar.
std::vector<std::string> ShardPaths(const std::string& cache, size_t n) {
  fs::create_directories(cache);
  std::vector<std::string> paths;
  for (size_t i = 0; i < n; ++i) paths.push_back(cache + "/shard-" + std::to_string(i) + ".tar");
  return paths;
}

// The shards at `paths`, each of `bytes`, as a store gives them to the space.
std::shared_ptr<const RemoteShardList> ShardsAt(const std::vector<std::string>& paths, uint64_t bytes) {
  std::vector<RemoteShard> shards;
  for (const std::string& p : paths) shards.push_back({"http://127.0.0.1:1/" + p, p, bytes, ""});
  return NewRemoteShardList(std::move(shards));
}

// Counts the looks (stat, lock probe) a decision takes at shards other than the one it decides on.
class LookCountingEnv final : public testing::ForwardingEnv {
 public:
  explicit LookCountingEnv(std::string deciding) : deciding_(std::move(deciding)) {}
  Status StatPath(const std::string& p, FileStat* s) override {
    Count(p);
    return base_->StatPath(p, s);
  }
  Status TryLockFile(const std::string& p, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                     uint32_t mode) override {
    Count(p);
    return base_->TryLockFile(p, shared, lock, acquired, mode);
  }
  void Deciding(const std::string& path) { deciding_ = path, looks_ = 0; }
  int looks() const { return looks_; }

 private:
  void Count(const std::string& p) {
    if (p.find(".tar") != std::string::npos && p.rfind(deciding_, 0) != 0) ++looks_;
  }
  std::string deciding_;
  int looks_ = 0;
};

// A decision under the limit looks at no other shard, however many the dataset has (each used to
// stat every shard of the dataset: quadratic over an epoch); over it, the victims are found among
// the shards the folder holds, and the limit holds.
TEST(SharedCacheSpaceLedger, DecisionsLookOnlyAtTheShardsTheFolderHolds) {
  testing::TempDir dir;
  const std::string cache = dir.Sub("cache");
  constexpr size_t kMany = 2000;
  constexpr uint64_t kBytes = 100;
  const std::vector<std::string> paths = ShardPaths(cache, kMany);
  LookCountingEnv env("");
  // Shards [first, last) reserved and "downloaded" one after another under `limit`: the most looks
  // of the first decision and of the later ones, and the most shard files the folder held.
  const auto fill = [&](uint64_t limit, size_t first, size_t last, int* first_looks, int* later_looks,
                        size_t* most_files) {
    SharedCacheSpace space(&env, cache, ShardsAt(paths, kBytes), limit, CacheModes());
    *first_looks = 0, *later_looks = 0, *most_files = 0;
    for (size_t i = first; i < last; ++i) {
      env.Deciding(paths[i]);
      std::unique_ptr<FileLock> fetch;
      SharedCacheSpace::Room room;
      uint32_t evicted = 0;
      uint64_t used = 0;
      ASSERT_TRUE(space.Reserve(i, false, {}, &fetch, &room, &evicted, &used).ok());
      ASSERT_EQ(room, SharedCacheSpace::Room::kTaken) << i;
      int* looks = i == first ? first_looks : later_looks;
      *looks = std::max(*looks, env.looks());
      testing::WriteFile(paths[i], std::string(kBytes, 'x'));  // the download
      size_t files = 0;
      for (const auto& e : fs::directory_iterator(cache)) files += e.path().extension() == ".tar";
      *most_files = std::max(*most_files, files);
    }
  };
  int first_looks = 0, later_looks = 0;
  size_t most_files = 0;
  fill(uint64_t(1) << 40, 0, 300, &first_looks, &later_looks, &most_files);
  EXPECT_EQ(std::max(first_looks, later_looks), 0) << "a decision under the limit looked at other shards";
  EXPECT_EQ(most_files, 300u);
  // A limit of 50 shards over the 300 there: the first decision checks the 300 the ledger names
  // and evicts down to the limit; each later one looks at the 50 held (and evicts one), never at
  // the 2,000. A shard removed behind the ledger's back just leaves it.
  fs::remove(cache + "/shard-7.tar");
  fill(50 * kBytes, 300, 400, &first_looks, &later_looks, &most_files);
  EXPECT_LE(most_files, 50u);
  EXPECT_GT(later_looks, 0);
  EXPECT_LE(later_looks, 8 * 51);  // a stat and a few lock probes for each of the 50 held
}

// Counts the files a decision opens (the ledger read, written or appended to, space.lock taken).
class OpenCountingEnv final : public testing::ForwardingEnv {
 public:
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    ++opens_;
    return base_->NewRandomAccessFile(p, f);
  }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override {
    ++opens_;
    return base_->ReadFile(p, max, c);
  }
  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    ++opens_;
    return base_->NewWritableFile(p, f);
  }
  Status NewAppendableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    ++opens_;
    return base_->NewAppendableFile(p, f);
  }
  Status LockFile(const std::string& p, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    ++opens_;
    return base_->LockFile(p, lock, mode);
  }
  int TakeOpens() { return std::exchange(opens_, 0); }

 private:
  int opens_ = 0;
};

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Two processes' decisions (two spaces over one folder, each with its own files and locks, as two
// processes have) open nothing once each has read the ledger: each appends its change and reads
// the other's; a third reads what both wrote. Under evictions the file is written again whole
// before it holds more than twice the lines it names; a ledger of version 1 is read and rewritten.
TEST(SharedCacheSpaceLedger, DecisionsAppendTheirChangeAndOpenNothing) {
  testing::TempDir dir;
  const std::string cache = dir.Sub("cache");
  constexpr size_t kShards = 1000;
  constexpr uint64_t kBytes = 100;
  const std::vector<std::string> paths = ShardPaths(cache, kShards);
  OpenCountingEnv env;
  const auto reserve = [&](SharedCacheSpace* space, size_t i, uint64_t* used) {
    std::unique_ptr<FileLock> fetch;
    SharedCacheSpace::Room room;
    uint32_t evicted = 0;
    ASSERT_TRUE(space->Reserve(i, false, {}, &fetch, &room, &evicted, used).ok());
    ASSERT_EQ(room, SharedCacheSpace::Room::kTaken) << i;
    testing::WriteFile(paths[i], std::string(kBytes, 'x'));  // the download
  };
  {
    SharedCacheSpace a(&env, cache, ShardsAt(paths, kBytes), uint64_t(1) << 40, CacheModes());
    SharedCacheSpace b(&env, cache, ShardsAt(paths, kBytes), uint64_t(1) << 40, CacheModes());
    int later_opens = 0;
    uint64_t used = 0;
    for (size_t i = 0; i < 200; ++i) {
      reserve(i % 2 == 0 ? &a : &b, i, &used);
      if (i >= 4) later_opens += env.TakeOpens();
      env.TakeOpens();
    }
    EXPECT_EQ(later_opens, 0) << "decisions after each space's first opened files";
    EXPECT_EQ(used, 200 * kBytes);
    std::vector<std::string> want = {"#shardpack-space-ledger-v2"};
    for (size_t i = 0; i < 200; ++i) want.push_back("+shard-" + std::to_string(i) + ".tar");
    EXPECT_EQ(Lines(cache + "/space.ledger"), want);
    SharedCacheSpace c(&env, cache, ShardsAt(paths, kBytes), uint64_t(1) << 40, CacheModes());
    reserve(&c, 200, &used);
    EXPECT_EQ(used, 201 * kBytes) << "a third space counts what the two named";
  }
  {
    // Under a limit of 10 shards every decision evicts one: a "-" line and a "+" line each.
    SharedCacheSpace a(&env, cache, ShardsAt(paths, kBytes), 10 * kBytes, CacheModes());
    SharedCacheSpace b(&env, cache, ShardsAt(paths, kBytes), 10 * kBytes, CacheModes());
    size_t most_lines = 0;
    uint64_t used = 0;
    for (size_t i = 201; i < 801; ++i) {
      reserve(i % 2 == 0 ? &a : &b, i, &used);
      most_lines = std::max(most_lines, Lines(cache + "/space.ledger").size());
    }
    EXPECT_EQ(used, 10 * kBytes);
    EXPECT_LE(most_lines, 1 + 2 * 10 + 256 + 2u);
    // What the ledger names in the end is what the folder holds.
    std::set<std::string> named, held;
    for (const std::string& line : Lines(cache + "/space.ledger")) {
      if (line[0] == '+') named.insert(line.substr(1));
      if (line[0] == '-') named.erase(line.substr(1));
    }
    for (const auto& e : fs::directory_iterator(cache)) {
      if (e.path().extension() == ".tar") held.insert(e.path().filename().string());
    }
    EXPECT_EQ(named, held);
    EXPECT_EQ(held.size(), 10u);
  }
  {
    // A ledger of version 1 (a name a line) from an earlier shardpack.
    for (const auto& e : fs::directory_iterator(cache)) {
      if (e.path().extension() == ".tar") fs::remove(e.path());
    }
    testing::WriteFile(paths[0], std::string(kBytes, 'x'));
    testing::WriteFile(paths[1], std::string(kBytes, 'x'));
    testing::WriteFile(cache + "/space.ledger", "shard-0.tar\nshard-1.tar\n");
    SharedCacheSpace a(&env, cache, ShardsAt(paths, kBytes), uint64_t(1) << 40, CacheModes());
    uint64_t used = 0;
    reserve(&a, 2, &used);
    EXPECT_EQ(used, 3 * kBytes);
    EXPECT_EQ(Lines(cache + "/space.ledger"),
              (std::vector<std::string>{"#shardpack-space-ledger-v2", "+shard-0.tar", "+shard-1.tar", "+shard-2.tar"}));
  }
}

}  // namespace
}  // namespace shardpack
