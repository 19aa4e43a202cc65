// SampleWriter (shardpack/writer.h): memory stays bounded when the producer outruns the disk, the
// pipeline's failures reach a producer blocked in Write(), Abort and the destructor leave no
// manifest, and several threads may write at once. The datasets' contents are checked against
// independent readers in python/tests/test_writer.py.
#include "shardpack/writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "shardpack/manifest.h"
#include "tests/support/fault_env.h"
#include "tests/support/image_factory.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;
using testing::FaultEnv;
using testing::TempDir;

// The process's peak resident set (VmHWM) in bytes, after resetting it to the current one.
uint64_t PeakRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::string NoisyJpeg(int side, uint64_t seed) {
  return testing::EncodeJpeg(testing::MakePixels(side, side, seed, /*noise=*/120), side, side, 95);
}

WriterOptions Options(Env* env) {
  WriterOptions o;
  o.pack.env = env;
  o.pack.sync = false;
  o.pack.threads = 2;
  o.pack.samples_per_shard = 64;
  o.queue_samples = 8;  // a shallow queue: the memory test's bound is 8 samples, not 64 MiB
  return o;
}

// Writes `samples` copies of `jpeg` (each a fresh string, as a producer makes them) through a disk
// that sleeps before every write; returns how far the peak RSS rose above where it started.
uint64_t PeakRiseWriting(const std::string& out, const std::string& jpeg, int samples) {
  FaultEnv env;
  env.SlowWritesOf(".tmp", std::chrono::microseconds(500));
  std::unique_ptr<SampleWriter> writer;
  EXPECT_TRUE(SampleWriter::Open(out, Options(&env), &writer).ok());
  ResetPeakRss();
  const uint64_t start = PeakRss();
  for (int i = 0; i < samples; ++i) {
    WriterSample s;
    s.image = jpeg;
    EXPECT_TRUE(writer->Write(std::move(s)).ok());
  }
  PackResult result;
  EXPECT_TRUE(writer->Close(&result).ok());
  EXPECT_EQ(result.manifest.samples, uint64_t(samples));
  return PeakRss() - start;
}

TEST(SampleWriter, MemoryIsBoundedWhenTheProducerOutrunsTheDisk) {
  TempDir dir;
  const std::string jpeg = NoisyJpeg(512, 1);
  ASSERT_GT(jpeg.size(), 200u << 10);
  // 100 and 400 samples: 20 MB and 80 MB of images through a disk slower than the producer. The
  // queue (8 samples) and the pipeline's slots (8) hold what is in flight, whatever the count.
  // (The default queue is bounded by 64 MiB instead.)
  const uint64_t few = PeakRiseWriting(dir.Sub("few"), jpeg, 100);
  const uint64_t many = PeakRiseWriting(dir.Sub("many"), jpeg, 400);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // ASan keeps freed memory in quarantine and TSan shadows it: the writes above ran under them, the
  // peak is measured in the Release build.
  GTEST_SKIP() << "the sanitizers hold freed memory: peak RSS is measured in the Release build";
#endif
  const uint64_t total = uint64_t(400) * jpeg.size();
  std::printf("peak RSS rise: %.1f MiB for 100 samples, %.1f MiB for 400 (%.1f MiB of images)\n", few / 1048576.0,
              many / 1048576.0, total / 1048576.0);
  EXPECT_LT(many, total / 4) << "peak rise " << many << " for " << total << " bytes written";
  EXPECT_LT(many, few + (8u << 20)) << "100 samples: " << few << ", 400 samples: " << many;
}

TEST(SampleWriter, AFailingDiskReachesABlockedProducer) {
  TempDir dir;
  FaultEnv env;
  env.FailWritesOf(".tar.tmp", 100'000);
  std::unique_ptr<SampleWriter> writer;
  WriterOptions o = Options(&env);
  o.queue_samples = 2;
  ASSERT_TRUE(SampleWriter::Open(dir.Sub("out"), o, &writer).ok());
  const std::string jpeg = NoisyJpeg(256, 2);
  Status s;
  int written = 0;
  for (; written < 10'000 && s.ok(); ++written) {
    WriterSample sample;
    sample.image = jpeg;
    s = writer->Write(std::move(sample));
  }
  ASSERT_FALSE(s.ok()) << "10,000 writes into a disk that fails after 100,000 bytes";
  EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.message();
  PackResult result;
  EXPECT_EQ(writer->Close(&result).message(), s.message());
  EXPECT_FALSE(fs::exists(dir.Sub("out/manifest.json")));
}

TEST(SampleWriter, AbortAndTheDestructorLeaveNoManifest) {
  TempDir dir;
  const std::string jpeg = NoisyJpeg(64, 3);
  for (const bool destroy : {false, true}) {
    const std::string out = dir.Sub(destroy ? "destroyed" : "aborted");
    std::unique_ptr<SampleWriter> writer;
    WriterOptions o = Options(nullptr);
    o.pack.samples_per_shard = 3;
    ASSERT_TRUE(SampleWriter::Open(out, o, &writer).ok());
    for (int i = 0; i < 10; ++i) {
      WriterSample s;
      s.image = jpeg;
      ASSERT_TRUE(writer->Write(std::move(s)).ok());
    }
    if (destroy) {
      writer.reset();
    } else {
      writer->Abort();
      WriterSample s;
      s.image = jpeg;
      EXPECT_EQ(writer->Write(std::move(s)).message(), "the writer was aborted; no manifest was written");
    }
    EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    for (const auto& e : fs::directory_iterator(out)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  }
}

TEST(SampleWriter, SeveralThreadsWriteOneDataset) {
  TempDir dir;
  std::unique_ptr<SampleWriter> writer;
  WriterOptions o = Options(nullptr);
  o.classes = {"a", "b", "c", "d"};
  ASSERT_TRUE(SampleWriter::Open(dir.Sub("out"), o, &writer).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        WriterSample s;
        s.key = "t" + std::to_string(t) + "_" + std::to_string(i);
        s.class_name = o.classes[t];
        s.image = NoisyJpeg(32, t * 100 + i);
        EXPECT_TRUE(writer->Write(std::move(s)).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  PackResult result;
  ASSERT_TRUE(writer->Close(&result).ok());
  EXPECT_EQ(result.manifest.samples, 200u);
  EXPECT_EQ(result.manifest.classes, o.classes);
  EXPECT_EQ(writer->Close(&result).message(), "the writer is closed already");
}

// Producers blocked in Write() on a full queue while another thread aborts or closes: each wakes
// with the writer's status (the Python binding shares one writer among threads this way), and none
// touches a queue that is gone. Run under ThreadSanitizer in scripts/test.sh.
TEST(SampleWriter, CloseOrAbortWakesProducersBlockedOnAFullQueue) {
  TempDir dir;
  const std::string jpeg = NoisyJpeg(32, 9);
  for (const bool abort : {true, false}) {
    for (int round = 0; round < 5; ++round) {
      const std::string out = dir.Sub((abort ? "aborted-" : "closed-") + std::to_string(round));
      FaultEnv env;
      env.SlowWritesOf(".tmp", std::chrono::microseconds(300));  // the queue stays full
      WriterOptions o = Options(&env);
      o.queue_samples = 2;
      std::unique_ptr<SampleWriter> writer;
      ASSERT_TRUE(SampleWriter::Open(out, o, &writer).ok());
      std::atomic<int> refused{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
          for (int i = 0; i < 40; ++i) {
            WriterSample s;
            s.image = jpeg;
            const Status st = writer->Write(std::move(s));
            if (st.ok()) continue;
            EXPECT_EQ(st.message(), abort ? "the writer was aborted; no manifest was written"
                                          : "the writer is closed: write before close()");
            ++refused;
            return;
          }
        });
      }
      while (writer->samples_queued() < uint64_t(4 + 4 * round)) std::this_thread::yield();
      PackResult result;
      if (abort) {
        writer->Abort();
      } else {
        ASSERT_TRUE(writer->Close(&result).ok());
      }
      for (std::thread& t : threads) t.join();
      EXPECT_EQ(fs::exists(out + "/manifest.json"), !abort);
      if (!abort) {
        // Every write that was accepted is in the dataset, every other one was refused.
        EXPECT_EQ(result.manifest.samples, writer->samples_queued());
      }
    }
  }
}

TEST(SampleWriter, OptionsAWriterCannotTake) {
  TempDir dir;
  std::unique_ptr<SampleWriter> writer;
  WriterOptions o;
  o.pack.shuffle = true;
  EXPECT_EQ(SampleWriter::Open(dir.Sub("a"), o, &writer).message(),
            "a writer takes no shuffle: it writes samples in the order they are given (the loader shuffles)");
  o = WriterOptions();
  o.part = 3;
  o.parts = 3;
  EXPECT_EQ(SampleWriter::Open(dir.Sub("a"), o, &writer).message(), "writer part 3 of 3: the part must lie in 0..2");
  o = WriterOptions();
  o.parts = 2;
  o.pack.force = true;
  EXPECT_EQ(SampleWriter::Open(dir.Sub("a"), o, &writer).message(),
            "force cannot be used with parts: it would remove the other writers' files (each part replaces its own)");
  EXPECT_FALSE(fs::exists(dir.Sub("a")));
}

}  // namespace
}  // namespace shardpack
