#include "shardpack/loader.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "formats/wds/dali_index.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/loader_bench.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::ReadFile;
using testing::WriteFile;

struct Epoch {
  std::vector<std::string> images;  // one string of bytes per batch
  std::vector<int32_t> labels;
  std::vector<uint64_t> indices;
  uint64_t batches = 0;
};

class LoaderTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    MakeTree(3, 9);  // 27 images
    PackResult r;
    ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  }

  LoaderOptions Options() {
    LoaderOptions o;
    o.sampler.batch_size = 4;
    o.sampler.seed = 11;
    o.height = 16;
    o.width = 12;
    o.threads = 2;
    return o;
  }

  Epoch Run(const LoaderOptions& o, uint64_t epoch, uint64_t first = 0) {
    std::unique_ptr<Loader> loader;
    EXPECT_TRUE(Loader::Open(out(), o, &loader).ok());
    EXPECT_TRUE(loader->StartEpoch(epoch, first).ok());
    Epoch e;
    for (;;) {
      const Batch* b = nullptr;
      Status s = loader->Next(&b);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (b == nullptr) break;
      EXPECT_EQ(b->image_bytes, size_t(b->count) * 16 * 12 * 3);
      e.images.emplace_back(reinterpret_cast<const char*>(b->images), b->image_bytes);
      e.labels.insert(e.labels.end(), b->labels.begin(), b->labels.end());
      e.indices.insert(e.indices.end(), b->indices.begin(), b->indices.end());
      ++e.batches;
    }
    EXPECT_EQ(e.batches + first, loader->batches_per_epoch());
    return e;
  }
};

TEST_F(LoaderTest, SameSeedSameBatchesOtherEpochOtherOrder) {
  Epoch a = Run(Options(), 0), b = Run(Options(), 0), c = Run(Options(), 1);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.indices, c.indices);
  EXPECT_EQ(std::set<uint64_t>(a.indices.begin(), a.indices.end()).size(), 27u);
}

TEST_F(LoaderTest, ResumeEqualsTheUninterruptedEpoch) {
  Epoch whole = Run(Options(), 2);
  Epoch resumed = Run(Options(), 2, 3);
  ASSERT_EQ(resumed.images.size(), whole.images.size() - 3);
  for (size_t i = 0; i < resumed.images.size(); ++i) EXPECT_EQ(resumed.images[i], whole.images[i + 3]) << i;
}

TEST_F(LoaderTest, RanksAndWorkersCoverTheEpochOnceWithEqualBatchCounts) {
  std::map<uint64_t, int> seen;
  std::vector<uint64_t> rank_batches;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    uint64_t batches = 0;
    for (uint32_t worker = 0; worker < 2; ++worker) {
      LoaderOptions o = Options();
      o.sampler.rank = rank;
      o.sampler.world_size = 2;
      o.sampler.worker = worker;
      o.sampler.num_workers = 2;
      Epoch e = Run(o, 0);
      for (uint64_t i : e.indices) ++seen[i];
      batches += e.batches;
    }
    rank_batches.push_back(batches);
  }
  EXPECT_EQ(seen.size(), 27u);
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << i;
  EXPECT_EQ(rank_batches[0], rank_batches[1]);
}

TEST_F(LoaderTest, LabelsFollowTheIndices) {
  Epoch e = Run(Options(), 0);
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
  ReadSample s;
  for (size_t i = 0; i < e.indices.size(); ++i) {
    ASSERT_TRUE(reader->Read(e.indices[i], &s).ok());
    EXPECT_EQ(e.labels[i], s.label);
  }
}

TEST_F(LoaderTest, MemoryIsAllocatedOnceThroughTheCallersAllocator) {
  int allocations = 0, frees = 0;
  size_t bytes = 0;
  LoaderOptions o = Options();
  o.prefetch = 3;
  o.allocator.allocate = [&](size_t n) {
    ++allocations;
    bytes = n;
    return new uint8_t[n];
  };
  o.allocator.free = [&](uint8_t* p, size_t) {
    ++frees;
    delete[] p;
  };
  {
    std::unique_ptr<Loader> loader;
    ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
      ASSERT_TRUE(loader->StartEpoch(epoch).ok());
      const Batch* b = nullptr;
      do ASSERT_TRUE(loader->Next(&b).ok()); while (b != nullptr);
    }
    EXPECT_EQ(allocations, 5);  // prefetch + 2, whatever the number of batches and epochs
  }
  EXPECT_EQ(frees, 5);
  EXPECT_EQ(bytes, 4u * 16 * 12 * 3);
}

TEST_F(LoaderTest, NchwIsTheTransposeOfNhwc) {
  LoaderOptions o = Options();
  Epoch hwc = Run(o, 0);
  o.nchw = true;
  Epoch chw = Run(o, 0);
  ASSERT_EQ(hwc.images.size(), chw.images.size());
  const std::string& a = hwc.images[0];
  const std::string& b = chw.images[0];
  for (size_t y = 0; y < 16; ++y) {
    for (size_t x = 0; x < 12; ++x) {
      for (size_t c = 0; c < 3; ++c) EXPECT_EQ(a[(y * 12 + x) * 3 + c], b[c * 16 * 12 + y * 12 + x]);
    }
  }
}

TEST_F(LoaderTest, EvalTransformMatchesResizeAndCentreCrop) {
  LoaderOptions o = Options();
  o.eval = true;
  o.eval_resize = 20;
  o.sampler.shuffle = false;
  Epoch e = Run(o, 0);
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
  ReadSample s;
  ASSERT_TRUE(reader->Read(5, &s).ok());
  TransformOptions t;
  t.resize_shorter = 20;
  t.crop_height = 16;
  t.crop_width = 12;
  DecodedImage expected;
  ASSERT_TRUE(DecodeAndTransform(s.encoded, t, &expected).ok());
  const std::string got = e.images[1].substr(1 * 16 * 12 * 3, 16 * 12 * 3);  // sample 5 = batch 1, slot 1
  double diff = 0;
  for (size_t i = 0; i < got.size(); ++i) diff += std::abs(int(uint8_t(got[i])) - int(expected.rgb[i]));
  EXPECT_LT(diff / got.size(), 6.0);
}

TEST_F(LoaderTest, CorruptSampleIsSkippedAndCountedOrReported) {
  // Damage the entropy-coded data of sample 0's JPEG inside the shard (keeping its end marker).
  std::vector<DaliIndexSample> index;
  ASSERT_TRUE(ParseDaliIndex(ReadFile(out() + "/shard-000000.idx"), &index).ok());
  std::string shard = ReadFile(out() + "/shard-000000.tar");
  const DaliIndexMember& jpg = index[0][1];
  const size_t scan = shard.find("\xFF\xDA", jpg.offset);
  for (size_t i = scan + 20; i < scan + 60; ++i) shard[i] = '\xFF';
  WriteFile(out() + "/shard-000000.tar", shard);
  LoaderOptions o = Options();
  o.sampler.shuffle = false;
  Epoch e = Run(o, 0);
  EXPECT_EQ(e.labels[0], -1);
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* b = nullptr;
  do ASSERT_TRUE(loader->Next(&b).ok()); while (b != nullptr);
  EXPECT_EQ(loader->stats().corrupt, 1u);
  EXPECT_EQ(loader->stats().images, 26u);
  o.skip_corrupt = false;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  Status s = loader->Next(&b);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
  EXPECT_EQ(b, nullptr);
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

TEST_F(LoaderTest, BenchCountsImagesAndTellsWhetherTheLoaderKeepsUp) {
  BenchOptions o;
  o.loader = Options();
  o.epochs = 2;
  BenchResult r;
  ASSERT_TRUE(RunLoaderBench(out(), o, &r).ok());
  EXPECT_EQ(r.images, 54u);
  EXPECT_EQ(r.batches, 14u);  // 27 images in batches of 4: 7 per epoch
  EXPECT_GT(r.images_per_second, 0);
  EXPECT_TRUE(r.keeps_up);
  o.consumer_rate = 1e9;  // a consumer that never waits on itself: it starves
  ASSERT_TRUE(RunLoaderBench(out(), o, &r).ok());
  EXPECT_FALSE(r.keeps_up);
  EXPECT_GT(r.consumer_wait_share, 0.05);
  o.consumer_rate = 50;  // 4 images take 80 ms: plenty of time for the loader, even at start-up
  o.epochs = 1;
  ASSERT_TRUE(RunLoaderBench(out(), o, &r).ok());
  EXPECT_TRUE(r.keeps_up) << r.consumer_wait_share;
}

}  // namespace
}  // namespace shardpack
