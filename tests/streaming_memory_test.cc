// Streaming memory (docs/remote.md): a dataset streamed without a cache under the streaming
// shuffle holds the shards being read and prefetched, not the shards of every sample still in the
// shuffle buffer, whatever the dataset's size; and its batches are the local loader's. Shards
// arrive through the HttpClient seam (tests/support/folder_http_client.h) into in-memory files,
// whose bytes this test samples from /proc/self/fd while the epoch runs.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "ops/read/remote_dataset_reader.h"
#include "shardpack/loader.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/folder_http_client.h"

namespace shardpack {
namespace {

// Bytes of this process's in-memory files (memfd) now: the streamed shards.
uint64_t MemoryFileBytes() {
  uint64_t bytes = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string path = std::string("/proc/self/fd/") + e->d_name;
    char target[256];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof(target) - 1);
    struct stat st;
    if (n > 0 && std::string(target, size_t(n)).rfind("/memfd:", 0) == 0 && ::stat(path.c_str(), &st) == 0) {
      bytes += uint64_t(st.st_size);
    }
  }
  ::closedir(dir);
  return bytes;
}

constexpr uint64_t kSamplesPerShard = 6;
constexpr uint64_t kBuffer = 24;  // four shards' worth of samples wait in the buffer

class StreamingMemoryTest : public testing::DatasetTest {
 protected:
  // `shards` shards of 6 samples of about 20 KB, in server/NAME.
  std::string PackDataset(const std::string& name, int shards) {
    for (int i = 0; i < shards * int(kSamplesPerShard); ++i) {
      testing::WriteFile(src() + "/" + name + "/c" + std::to_string(i % 3) + "/img" + std::to_string(i) + ".jpg",
                         testing::MakeImage(ImageFormat::kJpeg, 120, 100, uint64_t(i)));
    }
    PackOptions po = QuietOptions();
    po.samples_per_shard = kSamplesPerShard;
    PackResult r;
    const std::string out_dir = out("server/" + name);
    EXPECT_TRUE(Pack(src() + "/" + name, out_dir, po, &r).ok());
    uint64_t largest = 0;
    for (const ShardEntry& s : r.manifest.shards) largest = std::max(largest, s.bytes);
    largest_shard_ = std::max(largest_shard_, largest);
    return out_dir;
  }

  LoaderOptions Options() const {
    LoaderOptions o;
    o.read_plan_batches = plan_batches_;
    o.sampler.batch_size = 4;
    o.sampler.shuffle_buffer = kBuffer;
    o.sampler.seed = 5;
    o.height = o.width = 16;
    o.threads = 2;
    o.remote.sequential = true;
    o.remote.downloads = 1;
    o.remote.prefetch_shards = 1;
    return o;
  }

  // One epoch: the batches (images, labels) and, for the URL, the most in-memory file bytes seen.
  std::string Epoch(std::unique_ptr<Loader> loader, uint64_t* peak) {
    std::atomic<bool> done{false};
    std::atomic<uint64_t> most{0};
    std::thread sampler([&] {
      while (!done) {
        most = std::max<uint64_t>(most, MemoryFileBytes());
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    std::string all;
    EXPECT_TRUE(loader->StartEpoch(0).ok());
    for (;;) {
      const Batch* b = nullptr;
      const Status s = loader->Next(&b);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok() || b == nullptr) break;
      all.append(reinterpret_cast<const char*>(b->images), b->image_bytes);
      for (const int32_t label : b->labels) all += std::to_string(label) + ",";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a consumer: reads run ahead
    }
    loader.reset();
    done = true;
    sampler.join();
    if (peak != nullptr) *peak = most;
    return all;
  }

  std::string Local(const std::string& dir) {
    std::unique_ptr<Loader> loader;
    EXPECT_TRUE(Loader::Open(dir, Options(), &loader).ok());
    return Epoch(std::move(loader), nullptr);
  }

  std::string Streamed(const std::string& name, uint64_t* peak) {
    std::unique_ptr<DatasetReader> reader;
    const std::string server = out("server");
    Location location;
    EXPECT_TRUE(ParseLocation("http://test/" + name, &location).ok());
    const Status s = OpenRemoteDatasetReader(
        location, Env::Default(), Options().remote,
        [this, server] { return std::make_unique<testing::FolderHttpClient>(server, &log_, &mu_); }, &reader);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<Loader> loader;
    EXPECT_TRUE(Loader::Open(name, std::move(reader), Options(), &loader).ok());
    return Epoch(std::move(loader), peak);
  }

  uint64_t largest_shard_ = 0;
  uint64_t plan_batches_ = 0;  // LoaderOptions::read_plan_batches
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(StreamingMemoryTest, MemoryFollowsTheSettingsNotTheDatasetAndBatchesAreTheLocalOnes) {
  const std::string small = PackDataset("small", 12), large = PackDataset("large", 48);
  // The documented bound of the shards in memory: (3 + prefetch_shards + 1 spare) x largest shard.
  const uint64_t bound = (3 + 1 + 1) * largest_shard_;
  for (const auto& [name, dir] : {std::pair{"small", small}, std::pair{"large", large}}) {
    SCOPED_TRACE(name);
    uint64_t peak = 0;
    const std::string streamed = Streamed(name, &peak);
    EXPECT_EQ(streamed, Local(dir));
    EXPECT_GT(peak, 0u);
    EXPECT_LE(peak, bound) << "largest shard " << largest_shard_;
  }
  // Each shard was downloaded once per epoch.
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(std::count_if(log_.begin(), log_.end(), [](const std::string& n) { return n.find(".tar") != n.npos; }),
            12 + 48);
}

// The loader tells the reader its plan a window of batches at a time (ops/read/read_planner.h): with
// windows of 1, 2 and 5 batches (an epoch of 72), the batches, the one download per shard and the
// memory bound are those of the plan above (one window for the whole epoch at this size).
TEST_F(StreamingMemoryTest, PlansMadeAWindowAtATimeReadTheSameAndDownloadEachShardOnce) {
  const std::string large = PackDataset("large", 48);
  const uint64_t bound = (3 + 1 + 1) * largest_shard_;
  const std::string local = Local(large);
  for (const uint64_t window : {1, 2, 5}) {
    SCOPED_TRACE("window " + std::to_string(window));
    plan_batches_ = window;
    {
      std::lock_guard<std::mutex> lock(mu_);
      log_.clear();
    }
    uint64_t peak = 0;
    EXPECT_EQ(Streamed("large", &peak), local);
    EXPECT_GT(peak, 0u);
    EXPECT_LE(peak, bound) << "largest shard " << largest_shard_;
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(std::count_if(log_.begin(), log_.end(), [](const std::string& n) { return n.find(".tar") != n.npos; }),
              48);
  }
}

}  // namespace
}  // namespace shardpack
