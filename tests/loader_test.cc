#include "shardpack/loader.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <set>
#include <thread>

#include "ground/checksum.h"
#include "ops/read/forwarding_dataset_reader.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/loader_bench.h"
#include "tests/support/damaged_sample.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/forge_manifest.h"

namespace shardpack {
namespace {

using testing::ForgeManifest;
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

// Buckets and token budgets (docs/buckets.md; their rules are checked against a reference in
// python/tests/test_bucket_loader.py): here, under the sanitizers, that every sample arrives once, in
// a batch of its group's shape and bytes, and that a resumed epoch gives the same bytes.
// Batch sizes are the user's numbers: their products are checked, never wrapped into a small
// buffer (tokens_per_batch 2^56 + 1 x 16 x 16 x 3 wraps to 768 bytes; the decoders then wrote past
// it), and an allocator that cannot give the memory is an error, not an escaped bad_alloc.
TEST_F(LoaderTest, BatchSizesThatWrapOrExceedTheCapAreRefusedNamingTheOption) {
  std::unique_ptr<Loader> loader;
  LoaderOptions budget = Options();
  budget.patch = 16;
  budget.max_side = 256;
  budget.tokens_per_batch = (uint64_t(1) << 56) + 1;
  Status s = Loader::Open(out(), budget, &loader);
  EXPECT_EQ(s.ToString(),
            "invalid argument: tokens_per_batch 72057594037927937 of patches 16x16 x 3 channels makes batches of "
            "more than 2^64 bytes, over the 16 GiB one batch may hold (kMaxBatchBytes): lower tokens_per_batch");
  budget.tokens_per_batch = uint64_t(1) << 56;  // wraps to exactly 0
  EXPECT_EQ(Loader::Open(out(), budget, &loader).code(), Status::Code::kInvalidArgument);
  // 16 GiB / 768 bytes a token is 22,369,621.33 tokens: the last that fits, and the first that does not.
  budget.tokens_per_batch = 22369622;
  EXPECT_EQ(Loader::Open(out(), budget, &loader).ToString(),
            "invalid argument: tokens_per_batch 22369622 of patches 16x16 x 3 channels makes batches of 17.2 GB, "
            "over the 16 GiB one batch may hold (kMaxBatchBytes): lower tokens_per_batch");

  LoaderOptions bucketed = Options();
  bucketed.buckets = {{64, 64}, {32, 48}};
  bucketed.sampler.batch_size = 1501199875790166;  // x 4096 x 3 wraps
  EXPECT_EQ(Loader::Open(out(), bucketed, &loader).ToString(),
            "invalid argument: batch_size 1501199875790166 of images up to the largest bucket (4096 pixels) x 3 "
            "channels makes batches of more than 2^64 bytes, over the 16 GiB one batch may hold (kMaxBatchBytes): "
            "lower batch_size or use smaller buckets");
  bucketed.buckets = {{65535, 65535}};
  bucketed.sampler.batch_size = 2;  // 25.8 GB, no wrap
  EXPECT_EQ(Loader::Open(out(), bucketed, &loader).code(), Status::Code::kInvalidArgument);

  LoaderOptions square = Options();
  square.height = square.width = 4096;
  square.sampler.batch_size = uint64_t(1) << 40;
  EXPECT_EQ(Loader::Open(out(), square, &loader).ToString(),
            "invalid argument: batch_size 1099511627776 of 4096x4096 images x 3 channels makes batches of more than "
            "2^64 bytes, over the 16 GiB one batch may hold (kMaxBatchBytes): lower batch_size or the image size");

  LoaderOptions refused = Options();
  // 4 images x 16 x 12 x 3 = 2,304 bytes a buffer.
  refused.allocator.allocate = [](size_t) -> uint8_t* { throw std::bad_alloc(); };
  refused.allocator.free = [](uint8_t* p, size_t) { delete[] p; };
  EXPECT_EQ(Loader::Open(out(), refused, &loader).ToString(),
            "I/O error: cannot allocate a batch buffer of 2.3 KB (the loader holds 4, prefetch + 2): lower the batch "
            "size or prefetch");
  LoaderOptions deep = Options();
  deep.prefetch = 4'000'000'000u;
  EXPECT_EQ(Loader::Open(out(), deep, &loader).ToString(),
            "invalid argument: prefetch 4000000000 is over 1024 batches: lower prefetch (2 to 8 keeps a GPU fed)");
}

TEST_F(LoaderTest, BucketsAndBudgetsFillTheirShapesAndResumeExactly) {
  const auto epoch_of = [&](const LoaderOptions& o, uint64_t first) {
    std::unique_ptr<Loader> loader;
    EXPECT_TRUE(Loader::Open(out(), o, &loader).ok());
    EXPECT_TRUE(loader->StartEpoch(1, first).ok());
    std::vector<std::string> images;
    std::vector<uint64_t> indices;
    for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
      if (o.patch > 0) {
        EXPECT_EQ(b->token_offsets.size(), size_t(b->count) + 1);
        EXPECT_EQ(b->image_bytes, b->token_offsets.back() * o.patch * o.patch * 3);
        EXPECT_LE(b->token_offsets.back(), o.tokens_per_batch);
      } else {
        EXPECT_EQ(b->image_bytes, size_t(b->count) * b->width * b->height * 3);
        EXPECT_EQ(Bucket({b->width, b->height}), o.buckets[size_t(b->bucket)]);
      }
      images.emplace_back(reinterpret_cast<const char*>(b->images), b->image_bytes);
      indices.insert(indices.end(), b->indices.begin(), b->indices.end());
    }
    return std::make_pair(images, indices);
  };
  LoaderOptions bucketed = Options();
  bucketed.buckets = {{16, 12}, {12, 16}, {20, 8}};
  LoaderOptions budgeted = Options();
  budgeted.patch = 4;
  budgeted.max_side = 16;
  budgeted.tokens_per_batch = 40;
  for (const LoaderOptions& o : {bucketed, budgeted}) {
    const auto [images, indices] = epoch_of(o, 0);
    EXPECT_EQ(std::set<uint64_t>(indices.begin(), indices.end()).size(), 27u);
    EXPECT_EQ(indices.size(), 27u);
    const auto [resumed, unused] = epoch_of(o, 2);
    ASSERT_EQ(resumed.size() + 2, images.size());
    for (size_t i = 0; i < resumed.size(); ++i) EXPECT_EQ(resumed[i], images[i + 2]) << i;
  }
}

// A sample without a recorded size (shards written by another tool record 0 x 0) is refused at open
// with its key and the command that records sizes: the sizes are read without keys, so the key is
// looked up in the shard's records once. Here sample 000000005's width is forged to 0, in the
// table and the manifest's checksum of it alike.
TEST_F(LoaderTest, BucketsNameTheSampleWithoutASizeAndTheCommandThatRecordsIt) {
  PackResult r;
  ASSERT_TRUE(PackTo(out("forged"), QuietOptions(), &r).ok());
  const std::string table_file = r.manifest.shards[0].sample_table.file;
  std::string table = ReadFile(out("forged") + "/" + table_file);
  const size_t line = table.find("\n000000005\t") + 1;
  ASSERT_NE(line, 0u);
  size_t width = line;
  for (int tab = 0; tab < 6; ++tab) width = table.find('\t', width) + 1;
  table.replace(width, table.find('\t', width) - width, "0");
  WriteFile(out("forged") + "/" + table_file, table);
  ForgeManifest(out("forged"),
                [&](nlohmann::json* j) { (*j)["shardlist"][0]["sample_table"]["xxh64"] = ChecksumHex(Xxh64(table)); });
  LoaderOptions o = Options();
  o.buckets = {{16, 12}, {12, 16}};
  std::unique_ptr<Loader> loader;
  EXPECT_EQ(Loader::Open(out("forged"), o, &loader).ToString(),
            "invalid argument: buckets and token budgets need each image's size, and sample 000000005 of " +
                out("forged") + " (shard " + r.manifest.shards[0].file + ") has none recorded; `shardpack convert " +
                out("forged") + " NEW --format wds` writes a dataset that has them");
  // The same table unforged opens.
  o.buckets = {{16, 12}};
  EXPECT_TRUE(Loader::Open(out(), o, &loader).ok());
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

// Acquire/Release, as the Python binding uses them: a held batch is never overwritten, even across
// epochs, and holding every buffer is an error rather than a hang.
TEST_F(LoaderTest, HeldBatchesAreNeverReusedUntilReleased) {
  LoaderOptions o = Options();
  o.prefetch = 1;  // 3 buffers
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* first = nullptr;
  uint32_t first_slot = 0;
  ASSERT_TRUE(loader->Acquire(&first, &first_slot).ok());
  const std::string kept(reinterpret_cast<const char*>(first->images), first->image_bytes);
  const std::vector<uint64_t> kept_indices = first->indices;
  // The rest of the epoch and all of the next, through the other buffers.
  for (uint64_t epoch : {0, 1}) {
    if (epoch == 1) {
      ASSERT_TRUE(loader->StartEpoch(1).ok());
    }
    for (;;) {
      const Batch* b = nullptr;
      uint32_t slot = 0;
      ASSERT_TRUE(loader->Acquire(&b, &slot).ok());
      if (b == nullptr) break;
      EXPECT_NE(slot, first_slot);
      loader->Release(slot);
    }
  }
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(first->images), first->image_bytes), kept);
  EXPECT_EQ(first->indices, kept_indices);
  // Hold every buffer: the next Acquire cannot be served and says so.
  ASSERT_TRUE(loader->StartEpoch(2).ok());
  const Batch* b = nullptr;
  uint32_t a = 0, c = 0, d = 0;
  ASSERT_TRUE(loader->Acquire(&b, &a).ok());
  ASSERT_TRUE(loader->Acquire(&b, &c).ok());
  const Status s = loader->Acquire(&b, &d);
  EXPECT_EQ(s.ToString(),
            "invalid argument: all 3 batch buffers are still held by the consumer, so no batch can be "
            "made; let go of old batches (copy what you keep) or raise prefetch");
  loader->Release(first_slot);
  ASSERT_TRUE(loader->Acquire(&b, &d).ok());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->index, 2u);
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
      do ASSERT_TRUE(loader->Next(&b).ok());
      while (b != nullptr);
    }
    EXPECT_EQ(allocations, 5);  // prefetch + 2, whatever the number of batches and epochs
  }
  EXPECT_EQ(frees, 5);
  EXPECT_EQ(bytes, 4u * 16 * 12 * 3);
}

// JAX (and XLA) take a host buffer without a copy only when it starts on a 64-byte boundary;
// operator new[] gives 16 (glibc's large blocks lie 16 bytes into a page). So the loader's own
// buffers, images and masks, are aligned to 64 whatever their size.
TEST_F(LoaderTest, OwnBuffersStartOn64ByteBoundaries) {
  for (uint32_t side : {12u, 211u}) {  // a small buffer (malloc's heap) and a large one (its mmap)
    LoaderOptions o = Options();
    o.height = o.width = side;
    o.sampler.batch_size = 3;
    std::unique_ptr<Loader> loader;
    ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
    std::vector<const uint8_t*> buffers = loader->buffers();
    ASSERT_EQ(buffers.size(), 4u);  // prefetch 2 + 2
    for (const uint8_t* p : buffers) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << side;
    ASSERT_TRUE(loader->StartEpoch(0).ok());
    const Batch* b = nullptr;
    ASSERT_TRUE(loader->Next(&b).ok());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->images) % 64, 0u) << side;
  }
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

// The random-resized-crop against an independent reference: with the area share fixed at 1/4 and
// the aspect ratio at 1, each output must be a 48x48 box of the 96x96 source (decoded whole by
// TurboJPEG) shrunk to 24x24 by OpenCV. The test finds the box by trying every position.
class RandomResizedCropTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    for (int i = 0; i < 12; ++i) {
      sources_.push_back(testing::MakeImage(ImageFormat::kJpeg, 96, 96, uint64_t(i) * 7 + 1));
      WriteFile(src() + "/c0/img" + std::to_string(10 + i) + ".jpg", sources_.back());
    }
    PackResult r;
    ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  }

  LoaderOptions Options() const {
    LoaderOptions o;
    o.sampler.batch_size = 12;
    o.sampler.shuffle = false;
    o.height = o.width = 24;
    o.scale_min = o.scale_max = 0.25;
    o.ratio_min = o.ratio_max = 1.0;
    o.flip = 0;
    o.fast_decode = false;
    o.threads = 2;
    return o;
  }

  std::string OneBatch(const LoaderOptions& o) {
    std::unique_ptr<Loader> loader;
    EXPECT_TRUE(Loader::Open(out(), o, &loader).ok());
    EXPECT_TRUE(loader->StartEpoch(0).ok());
    const Batch* b = nullptr;
    EXPECT_TRUE(loader->Next(&b).ok());
    return b ? std::string(reinterpret_cast<const char*>(b->images), b->image_bytes) : std::string();
  }

  std::vector<std::string> sources_;
};

TEST_F(RandomResizedCropTest, EachOutputIsTheDrawnBoxOfTheSourceResized) {
  const std::string batch = OneBatch(Options());
  ASSERT_EQ(batch.size(), 12u * 24 * 24 * 3);
  std::set<int> positions;
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE(i);
    // TurboJPEG's full decode: independent of the library's libjpeg decoder.
    std::vector<uint8_t> full(96 * 96 * 3);
    tjhandle tj = tjInitDecompress();
    const std::string& jpeg = sources_[size_t(i)];
    ASSERT_EQ(tjDecompress2(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), full.data(), 96, 0,
                            96, TJPF_RGB, 0),
              0);
    tjDestroy(tj);
    const cv::Mat rgb(96, 96, CV_8UC3, full.data());
    const cv::Mat got(24, 24, CV_8UC3, const_cast<char*>(batch.data()) + size_t(i) * 24 * 24 * 3);
    double best = 1e9, total = 0;
    int best_pos = -1;
    for (int y = 0; y <= 48; ++y) {
      for (int x = 0; x <= 48; ++x) {
        cv::Mat expected;
        cv::resize(rgb(cv::Rect(x, y, 48, 48)), expected, cv::Size(24, 24), 0, 0, cv::INTER_AREA);
        const double diff = cv::norm(got, expected, cv::NORM_L1) / (24 * 24 * 3);
        total += diff;
        if (diff < best) best = diff, best_pos = y * 100 + x;
      }
    }
    // The half-scale DCT decode the loader uses here differs from a full decode + area average by
    // about a level; a box one pixel off differs by many (the source is noisy).
    EXPECT_LT(best, 2.0);
    EXPECT_LT(best * 4, total / (49 * 49));
    positions.insert(best_pos);
  }
  EXPECT_GE(positions.size(), 8u);  // boxes are drawn anywhere, not at one place
}

TEST_F(RandomResizedCropTest, FlipMirrorsTheSameCrop) {
  LoaderOptions o = Options();
  const std::string plain = OneBatch(o);
  o.flip = 1.0;
  const std::string flipped = OneBatch(o);
  ASSERT_EQ(plain.size(), flipped.size());
  size_t mismatches = 0;
  for (size_t img = 0; img < 12; ++img) {
    for (size_t y = 0; y < 24; ++y) {
      for (size_t x = 0; x < 24; ++x) {
        for (size_t c = 0; c < 3; ++c) {
          mismatches += plain[((img * 24 + y) * 24 + x) * 3 + c] != flipped[((img * 24 + y) * 24 + (23 - x)) * 3 + c];
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST_F(LoaderTest, CorruptSampleIsLeftOutOfItsBatchReportedOnceAndCounted) {
  LoaderOptions o = Options();
  o.sampler.shuffle = false;
  const Epoch clean = Run(o, 0);  // before the damage: the reference for every other sample
  const size_t per_image = 16 * 12 * 3;
  std::string clean_images;
  for (const std::string& batch : clean.images) clean_images += batch;
  ASSERT_NO_FATAL_FAILURE(testing::DamageFirstJpegScan(out()));
  const Epoch e = Run(o, 0);
  // Skipped means left out: the first batch holds samples 1..3, no zeros labelled -1.
  ASSERT_EQ(e.indices.size(), 26u);
  for (uint64_t i = 0; i < 26; ++i) EXPECT_EQ(e.indices[i], i + 1);
  EXPECT_EQ(std::vector<int32_t>(e.labels.begin(), e.labels.end()),
            std::vector<int32_t>(clean.labels.begin() + 1, clean.labels.end()));
  EXPECT_EQ(e.images[0].size(), 3 * per_image);
  std::string images;
  for (const std::string& batch : e.images) images += batch;
  EXPECT_EQ(images, clean_images.substr(per_image));
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* b = nullptr;
  do ASSERT_TRUE(loader->Next(&b).ok());
  while (b != nullptr);
  EXPECT_EQ(loader->stats().corrupt, 1u);
  EXPECT_EQ(loader->stats().images, 26u);
  const std::vector<std::string> reports = loader->TakeSkipReports();
  ASSERT_NO_FATAL_FAILURE(testing::ExpectSampleZeroNamedOnce(reports, loader->TakeSkipReports()));
  // A batch left with no sample is not handed out; the others keep their indices (resume counts it).
  o.sampler.batch_size = 1;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  EXPECT_EQ(loader->batches_per_epoch(), 27u);
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->index, 1u);
  EXPECT_EQ(b->indices, std::vector<uint64_t>{1});
  o.skip_corrupt = false;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  Status s = loader->Next(&b);
  EXPECT_EQ(s.code(), Status::Code::kCorrupt);
  EXPECT_EQ(b, nullptr);
}

TEST_F(LoaderTest, DropLastWithABatchLargerThanTheDatasetWarnsAtOpen) {
  LoaderOptions o = Options();
  o.sampler.batch_size = 64;
  o.sampler.drop_last = true;
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  EXPECT_EQ(loader->batches_per_epoch(), 0u);
  ASSERT_EQ(loader->warnings().size(), 1u);
  EXPECT_EQ(loader->warnings()[0], out() +
                                       ": 27 samples make no whole batch of 64 with drop_last: every epoch is empty (0 "
                                       "batches). Use a smaller batch size, or keep the last partial batch (no "
                                       "drop_last)");
  o.sampler.drop_last = false;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  EXPECT_TRUE(loader->warnings().empty());
}

TEST_F(LoaderTest, AMaskOrRequiredFieldNoSampleHasIsRefusedAtOpen) {
  LoaderOptions o = Options();
  o.mask = "seg.png";
  std::unique_ptr<Loader> loader;
  Status s = Loader::Open(out(), o, &loader);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), out() +
                             " has no mask field 'seg.png' (its samples' fields: none), which the loader's mask "
                             "option asks of every sample");
  o.mask.clear();
  o.fields = {"txt"};
  o.require_fields = true;
  s = Loader::Open(out(), o, &loader);
  EXPECT_EQ(s.message(), out() +
                             " has no field 'txt' (its samples' fields: none), which require_fields asks of "
                             "every sample");
  o.require_fields = false;  // optional fields: a dataset without them is fine
  EXPECT_TRUE(Loader::Open(out(), o, &loader).ok());
}

TEST_F(LoaderTest, FingerprintFollowsTheShardsNotThePath) {
  std::unique_ptr<Loader> a, b;
  ASSERT_TRUE(Loader::Open(out(), Options(), &a).ok());
  std::filesystem::copy(out(), out() + "-copy");
  ASSERT_TRUE(Loader::Open(out() + "-copy", Options(), &b).ok());
  EXPECT_EQ(a->DatasetFingerprint(), b->DatasetFingerprint());
  EXPECT_EQ(a->DatasetFingerprint().size(), 16u);
  // Another dataset: the same tree packed with other shard sizes.
  PackOptions p = QuietOptions();
  p.samples_per_shard = 5;
  PackResult r;
  ASSERT_TRUE(PackTo(out() + "-other", p, &r).ok());
  ASSERT_TRUE(Loader::Open(out() + "-other", Options(), &b).ok());
  EXPECT_NE(a->DatasetFingerprint(), b->DatasetFingerprint());
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
  EXPECT_FALSE(r.predecoded);  // JPEGs: pre-decoding is advice that can help
  o.consumer_rate = 1e9;       // a consumer that never waits on itself: it starves
  ASSERT_TRUE(RunLoaderBench(out(), o, &r).ok());
  EXPECT_FALSE(r.keeps_up);
  EXPECT_GT(r.consumer_wait_share, 0.05);
  // 4 images take 200 ms: plenty of time for the loader, even at start-up, even under
  // ThreadSanitizer on a busy machine (50 a second once left it waiting 17% of the time there).
  o.consumer_rate = 20;
  o.epochs = 1;
  ASSERT_TRUE(RunLoaderBench(out(), o, &r).ok());
  EXPECT_TRUE(r.keeps_up) << r.consumer_wait_share;
  // The 27 small JPEGs decode in a few milliseconds of the 1.35 s the consumer takes: the threads
  // were busy a small share of the run (and spent some CPU time).
  EXPECT_GT(r.cores_busy, 0);
  EXPECT_LT(r.cores_busy, 0.25);
  EXPECT_GT(r.cpu_seconds, 0);
}

// Captions beside the images: the loader delivers each with its own image, over shuffled epochs
// and two ranks. A caption names its image's path, and path keys name it too, so the key is the
// reference (not the loader's own indexing).
class LoaderFieldsTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    paths_ = MakeTree(3, 9);
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (i % 4 == 3) continue;  // some images have no caption
      const std::string stem = paths_[i].substr(0, paths_[i].find('.'));
      WriteFile(src() + "/" + stem + ".txt", i % 5 == 0 ? "" : stem);
    }
  }
  std::vector<std::string> paths_;
};

TEST_F(LoaderFieldsTest, EveryCaptionArrivesWithItsOwnImageAcrossRanksAndEpochs) {
  PackOptions po = QuietOptions();
  po.path_keys = true;
  po.samples_per_shard = 5;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), po, &r).ok());
  size_t with_caption = 0, without = 0, empty = 0;
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    std::set<std::string> seen;
    for (uint32_t rank = 0; rank < 2; ++rank) {
      LoaderOptions o;
      o.sampler.batch_size = 4;
      o.sampler.seed = 5;
      o.sampler.rank = rank;
      o.sampler.world_size = 2;
      o.height = o.width = 8;
      o.threads = 2;
      o.fields = {"txt"};
      std::unique_ptr<Loader> loader;
      ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
      ASSERT_TRUE(loader->StartEpoch(epoch).ok());
      for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
        ASSERT_EQ(b->fields.size(), 1u);
        ASSERT_EQ(b->fields[0].size(), b->count);
        for (uint32_t i = 0; i < b->count; ++i) {
          seen.insert(b->keys[i]);
          const std::optional<std::string>& caption = b->fields[0][i];
          const size_t source = size_t(std::find_if(paths_.begin(), paths_.end(),
                                                    [&](const std::string& p) {
                                                      std::string key = p.substr(0, p.find('.'));
                                                      std::replace(key.begin(), key.end(), '/', '_');
                                                      return key == b->keys[i];
                                                    }) -
                                       paths_.begin());
          ASSERT_LT(source, paths_.size()) << b->keys[i];
          if (source % 4 == 3) {
            EXPECT_FALSE(caption.has_value()) << b->keys[i];
            ++without;
          } else if (source % 5 == 0) {
            EXPECT_EQ(caption, std::optional<std::string>("")) << b->keys[i];
            ++empty;
          } else {
            ASSERT_TRUE(caption.has_value()) << b->keys[i];
            std::string key = *caption;
            std::replace(key.begin(), key.end(), '/', '_');
            EXPECT_EQ(key, b->keys[i]);
            ++with_caption;
          }
        }
      }
    }
    EXPECT_EQ(seen.size(), paths_.size());  // padding may repeat a sample; every one came
  }
  EXPECT_GT(with_caption, 0u);
  EXPECT_GT(without, 0u);
  EXPECT_GT(empty, 0u);
}

TEST_F(LoaderFieldsTest, RequireFieldsNamesTheSampleWithoutAndOtherFormatsHaveNone) {
  PackOptions po = QuietOptions();
  po.path_keys = true;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), po, &r).ok());
  LoaderOptions o;
  o.sampler.batch_size = 27;
  o.sampler.shuffle = false;
  o.height = o.width = 8;
  o.fields = {"txt"};
  o.require_fields = true;
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* b = nullptr;
  Status s = loader->Next(&b);
  // paths_[3] is c0/img3.JPG, the first image without a caption; in key order c0_img3 is index 3.
  EXPECT_EQ(s.message(), "sample c0_img3 (index 3) has no field 'txt', and require_fields is set");

  // LMDB keeps fields too (SPR2 records): the same captions at the same indices as from wds.
  o.require_fields = false;
  ASSERT_TRUE(Loader::Open(out(), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  const std::vector<std::optional<std::string>> from_wds = b->fields[0];
  EXPECT_EQ(std::count(from_wds.begin(), from_wds.end(), std::nullopt), 6);
  po.format = DatasetFormat::kLmdb;
  ASSERT_TRUE(PackTo(out("lmdb"), po, &r).ok());
  EXPECT_TRUE(r.manifest.skipped.empty());
  ASSERT_TRUE(Loader::Open(out("lmdb"), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->fields[0], from_wds);

  // Raw keeps text fields beside its pixels (a JSON Lines side file): the same captions again.
  po.format = DatasetFormat::kRaw;
  po.crop_height = po.crop_width = 8;
  ASSERT_TRUE(PackTo(out("raw"), po, &r).ok());
  EXPECT_TRUE(r.manifest.skipped.empty());
  ASSERT_TRUE(Loader::Open(out("raw"), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->fields[0], from_wds);
  // Its images are stored decoded: bench must not advise pre-decoding them (issue 40).
  EXPECT_TRUE(loader->reads_decoded_images());
  BenchOptions bo;
  bo.loader = o;
  BenchResult bench;
  ASSERT_TRUE(RunLoaderBench(out("raw"), bo, &bench).ok());
  EXPECT_TRUE(bench.predecoded);
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

// A reader whose sample 5 throws, as an allocation that fails deep in a decoder would.
class ThrowingReader final : public ForwardingDatasetReader {
 public:
  using ForwardingDatasetReader::ForwardingDatasetReader;
  Status Read(uint64_t index, ReadSample* out) const override {
    if (index == 5) throw std::bad_alloc();
    return ForwardingDatasetReader::Read(index, out);
  }
};

// A reader whose sample 0 takes 300 ms, and which notes when each read ends.
class SlowFirstSampleReader final : public ForwardingDatasetReader {
 public:
  using ForwardingDatasetReader::ForwardingDatasetReader;
  Status Read(uint64_t index, ReadSample* out) const override {
    if (index == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const Status s = ForwardingDatasetReader::Read(index, out);
    std::lock_guard<std::mutex> lock(mu_);
    ends_[index] = std::chrono::steady_clock::now();
    return s;
  }
  std::chrono::steady_clock::time_point end(uint64_t index) const {
    std::lock_guard<std::mutex> lock(mu_);
    return ends_.at(index);
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::chrono::steady_clock::time_point> ends_;
};

// Epoch 0 of `o` read through a SlowFirstSampleReader (sample 0 takes 300 ms): the loader (which
// owns the reader, kept for its read times) and each batch's number in the order Next() gave them.
struct SlowFirstSampleRun {
  std::unique_ptr<Loader> loader;
  const SlowFirstSampleReader* reader = nullptr;
  std::vector<uint64_t> batch_numbers;
};

// Runs `o` over `dataset` through a SlowFirstSampleReader and checks that its batches are
// `one_thread`'s, byte for byte.
void RunWithSlowFirstSample(const std::string& dataset, const LoaderOptions& o, const Epoch& one_thread,
                            SlowFirstSampleRun* run) {
  std::unique_ptr<DatasetReader> inner;
  ASSERT_TRUE(DatasetReader::Open(dataset, nullptr, &inner).ok());
  auto slow = std::make_unique<SlowFirstSampleReader>(std::move(inner), nullptr);
  run->reader = slow.get();
  ASSERT_TRUE(Loader::Open("slow", std::move(slow), o, &run->loader).ok());
  ASSERT_TRUE(run->loader->StartEpoch(0).ok());
  Epoch got;
  for (const Batch* b = nullptr;;) {
    ASSERT_TRUE(run->loader->Next(&b).ok());
    if (b == nullptr) break;
    run->batch_numbers.push_back(b->index);
    got.images.emplace_back(reinterpret_cast<const char*>(b->images), b->image_bytes);
    got.indices.insert(got.indices.end(), b->indices.begin(), b->indices.end());
    got.labels.insert(got.labels.end(), b->labels.begin(), b->labels.end());
  }
  EXPECT_EQ(got.indices, one_thread.indices);
  EXPECT_EQ(got.labels, one_thread.labels);
  EXPECT_TRUE(got.images == one_thread.images);
}

TEST_F(LoaderTest, ThreadsGoOnToTheNextBatchWhileOneFinishesAndBatchesStillComeInOrder) {
  LoaderOptions o = Options();
  o.sampler.shuffle = false;  // batch 0 is samples 0-3, batch 1 samples 4-7
  LoaderOptions one_thread = o;
  one_thread.threads = 1;
  SlowFirstSampleRun run;
  // Every batch is the one thread's, byte for byte ...
  RunWithSlowFirstSample(out(), o, Run(one_thread, 0), &run);
  if (HasFatalFailure()) return;
  // ... though while one thread waited on sample 0, the other filled batch 1 (the loader before
  // filled one batch at a time: sample 7 was read after sample 0) ...
  EXPECT_LT(run.reader->end(7), run.reader->end(0));
  // ... and batch 0 came first.
  EXPECT_EQ(run.batch_numbers, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6}));
}

// Batches of 2 on 2 threads: the batches behind the oldest hold twice the threads' images, so while
// one thread waits on sample 0 the other fills batches 1 and 2 (samples 2-5); batch 3 waits for a
// slot, since memory stays prefetch + 2 batches (here 4: one for the consumer, three filling).
TEST_F(LoaderTest, SmallBatchesFillFurtherAheadWithinTheSlots) {
  LoaderOptions o = Options();
  o.sampler.shuffle = false;
  o.sampler.batch_size = 2;
  o.threads = 2;
  o.prefetch = 2;
  LoaderOptions one_thread = o;
  one_thread.threads = 1;
  SlowFirstSampleRun run;
  RunWithSlowFirstSample(out(), o, Run(one_thread, 0), &run);
  if (HasFatalFailure()) return;
  std::vector<uint64_t> in_order(14);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_EQ(run.batch_numbers, in_order);
  // Samples 2-5 (batches 1 and 2) were read while sample 0 was (the loader before filled two
  // batches at a time: sample 5 was read after sample 0) ...
  EXPECT_LT(run.reader->end(5), run.reader->end(0));
  // ... and batch 3's samples only after it: three batches filling at most.
  EXPECT_GT(run.reader->end(6), run.reader->end(0));
}

TEST_F(LoaderTest, AnExceptionOnTheProducerThreadIsAnErrorNotTheEndOfTheProcess) {
  LoaderOptions o = Options();
  o.sampler.shuffle = false;
  std::unique_ptr<DatasetReader> inner;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &inner).ok());
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open("throwing", std::make_unique<ThrowingReader>(std::move(inner), nullptr), o, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  const Batch* b = nullptr;
  ASSERT_TRUE(loader->Next(&b).ok());  // samples 0..3
  ASSERT_NE(b, nullptr);
  const Status s = loader->Next(&b);  // samples 4..7: sample 5 throws
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.message(), "the loader's decode threads: out of memory (an allocation failed)");
  EXPECT_EQ(b, nullptr);
  ASSERT_TRUE(loader->StartEpoch(0).ok());  // the loader is usable again
  ASSERT_TRUE(loader->Next(&b).ok());
  EXPECT_EQ(b->count, 4u);
}

}  // namespace
}  // namespace shardpack
