// The CUDA feed. Its tests need a CUDA device and skip cleanly without one (CI has none; scripts/device-bench.sh runs
// them on the device).
#include "shardpack/cuda_feed.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "ops/cuda/host_to_device_bench.h"
#include "tests/support/damaged_sample.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/normalize_reference.h"

namespace shardpack {
namespace {

class CudaFeedTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    MakeTree(3, 7);
    PackResult r;
    ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  }
  LoaderOptions Options() {
    LoaderOptions o;
    o.sampler.batch_size = 4;
    o.sampler.seed = 9;
    o.height = 16;
    o.width = 12;
    o.threads = 2;
    return o;
  }
};

TEST_F(CudaFeedTest, WithoutADeviceOpenSaysSo) {
  std::string why;
  if (CudaDeviceAvailable(&why)) GTEST_SKIP() << "a CUDA device is present";
  std::unique_ptr<CudaFeed> feed;
  CudaFeedOptions o;
  o.loader = Options();
  const Status s = CudaFeed::Open(out(), o, &feed);
  EXPECT_EQ(s.ToString(), "unsupported: no usable CUDA device: " + why);
}

float ToFloat(const std::vector<uint8_t>& bytes, size_t i, DeviceDType t) {
  if (t == DeviceDType::kFloat32) return reinterpret_cast<const float*>(bytes.data())[i];
  if (t == DeviceDType::kFloat16) return __half2float(reinterpret_cast<const __half*>(bytes.data())[i]);
  return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(bytes.data())[i]);
}

// Every batch in GPU memory equals the CPU loader's batch (normalised by the reference) for every
// output type, with the buffers rotating through several epochs.
TEST_F(CudaFeedTest, DeviceBatchesEqualTheLoadersBatches) {
  std::string why;
  if (!CudaDeviceAvailable(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  for (DeviceDType t : {DeviceDType::kUint8, DeviceDType::kFloat32, DeviceDType::kFloat16, DeviceDType::kBFloat16}) {
    SCOPED_TRACE(int(t));
    CudaFeedOptions fo;
    fo.loader = Options();
    fo.dtype = t;
    fo.depth = 2;
    std::unique_ptr<CudaFeed> feed;
    ASSERT_TRUE(CudaFeed::Open(out(), fo, &feed).ok());
    std::unique_ptr<Loader> cpu;
    ASSERT_TRUE(Loader::Open(out(), Options(), &cpu).ok());
    cudaStream_t consumer;
    ASSERT_EQ(cudaStreamCreate(&consumer), cudaSuccess);
    for (uint64_t epoch = 0; epoch < 2; ++epoch) {
      ASSERT_TRUE(feed->StartEpoch(epoch).ok());
      ASSERT_TRUE(cpu->StartEpoch(epoch).ok());
      for (;;) {
        const DeviceBatch* d = nullptr;
        const Batch* h = nullptr;
        ASSERT_TRUE(feed->Next(&d).ok());
        ASSERT_TRUE(cpu->Next(&h).ok());
        ASSERT_EQ(d == nullptr, h == nullptr);
        if (d == nullptr) break;
        ASSERT_EQ(d->count, h->count);
        std::vector<uint8_t> got(d->bytes);
        ASSERT_EQ(cudaStreamWaitEvent(consumer, static_cast<cudaEvent_t>(d->ready), 0), cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(got.data(), d->data, d->bytes, cudaMemcpyDeviceToHost, consumer), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
        // The host buffer went back to the loader when the copy ended, and after a moment holds a
        // later batch: the device batch's labels, keys and indices must be its own (they were once
        // read from that buffer, and on the H200 Python's labels came from another batch).
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_EQ(d->labels, h->labels);
        EXPECT_EQ(d->keys, h->keys);
        EXPECT_EQ(d->indices, h->indices);
        ASSERT_TRUE(feed->Done(*d, consumer).ok());
        if (t == DeviceDType::kUint8) {
          EXPECT_EQ(0, std::memcmp(got.data(), h->images, h->image_bytes));
          continue;
        }
        std::vector<float> expected(h->image_bytes);
        NormalizeNhwcToNchwReference(h->images, h->count, 16, 12, fo.mean, fo.std, expected.data());
        const double tolerance = t == DeviceDType::kFloat32 ? 1e-5 : t == DeviceDType::kFloat16 ? 2e-3 : 1e-2;
        size_t bad = 0;
        for (size_t i = 0; i < expected.size(); ++i) {
          bad += std::fabs(ToFloat(got, i, t) - expected[i]) > tolerance * std::max(1.0f, std::fabs(expected[i]));
        }
        EXPECT_EQ(bad, 0u);
      }
    }
    cudaStreamDestroy(consumer);
  }
}

TEST_F(CudaFeedTest, ForgettingDoneIsAnErrorNotACorruption) {
  std::string why;
  if (!CudaDeviceAvailable(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  CudaFeedOptions fo;
  fo.loader = Options();
  fo.depth = 2;
  std::unique_ptr<CudaFeed> feed;
  ASSERT_TRUE(CudaFeed::Open(out(), fo, &feed).ok());
  ASSERT_TRUE(feed->StartEpoch(0).ok());
  const DeviceBatch* d = nullptr;
  ASSERT_TRUE(feed->Next(&d).ok());
  ASSERT_TRUE(feed->Next(&d).ok());
  EXPECT_EQ(
      feed->Next(&d).ToString(),
      "invalid argument: CudaFeed: Done() was not called for the batch 2 batches ago, whose device buffer comes next");
}

// A sample that cannot be decoded is left out of its device batch, counted and reported once, as
// the CPU loader does: the Python loader warns from these lines, so nothing goes missing silently.
TEST_F(CudaFeedTest, CorruptSampleIsLeftOutCountedAndReported) {
  std::string why;
  if (!CudaDeviceAvailable(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  ASSERT_NO_FATAL_FAILURE(testing::DamageFirstJpegScan(out()));
  CudaFeedOptions fo;
  fo.loader = Options();
  fo.loader.sampler.shuffle = false;
  fo.dtype = DeviceDType::kUint8;
  std::unique_ptr<CudaFeed> feed;
  ASSERT_TRUE(CudaFeed::Open(out(), fo, &feed).ok());
  ASSERT_TRUE(feed->StartEpoch(0).ok());
  std::vector<uint64_t> indices;
  for (;;) {
    const DeviceBatch* d = nullptr;
    ASSERT_TRUE(feed->Next(&d).ok());
    if (d == nullptr) break;
    indices.insert(indices.end(), d->indices.begin(), d->indices.end());
    ASSERT_TRUE(feed->Done(*d, nullptr).ok());
  }
  std::vector<uint64_t> expected(20);  // 3 classes x 7 images, all but sample 0, in order
  for (uint64_t i = 0; i < 20; ++i) expected[i] = i + 1;
  EXPECT_EQ(indices, expected);
  EXPECT_EQ(feed->stats().corrupt, 1u);
  EXPECT_EQ(feed->stats().images, 20u);
  const std::vector<std::string> reports = feed->TakeSkipReports();
  ASSERT_NO_FATAL_FAILURE(testing::ExpectSampleZeroNamedOnce(reports, feed->TakeSkipReports()));
}

// shardpack doctor's host-to-device stage: without a device it says why, as CudaFeed::Open does; with
// one, both copies ran and the batch rate is the pinned byte rate over the batch size.
TEST(HostToDeviceBench, MeasuresPinnedAndPageableCopiesOrSaysWhyNot) {
  std::string why;
  HostToDeviceFigures f;
  const uint64_t batch = 256ull * 224 * 224 * 3;
  const Status s = MeasureHostToDevice(batch, 0.2, &f);
  if (!CudaDeviceAvailable(&why)) {
    EXPECT_EQ(s.ToString(), "unsupported: no usable CUDA device: " + why);
    EXPECT_EQ(f.pinned_gb_per_s, 0);
    return;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(f.device.empty());
  EXPECT_GT(f.pageable_gb_per_s, 0);
  EXPECT_GT(f.pinned_gb_per_s, 0);
  EXPECT_NEAR(f.pinned_batches_per_s * double(batch) / 1e9, f.pinned_gb_per_s, 1e-9 * f.pinned_gb_per_s);
}

}  // namespace
}  // namespace shardpack
