// shardpack doctor: its verdict follows the evidence of its own measurements. No timing thresholds:
// each test builds a tree where one layer is slower than the others by a wide margin (storage made
// slow through the Env seam, or images that are costly to decode) and checks which layer the
// doctor names, and what it recommends.
#include "shardpack/doctor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "ops/diagnose/doctor_verdict.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/fault_env.h"

namespace shardpack {
namespace {

using testing::WriteFile;

// The report's row named `name`, or nullptr.
const DoctorLayer* Row(const DoctorReport& r, const std::string& name) {
  for (const DoctorLayer& l : r.layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

class DoctorTest : public testing::DatasetTest {
 protected:
  DoctorOptions Options() {
    DoctorOptions o;
    o.seconds = 3;
    o.threads = 2;
    o.batch = 8;
    o.crop = 32;
    o.temp_parent = dir_.Sub("tmp");
    std::filesystem::create_directories(o.temp_parent);
    return o;
  }
  // What the doctor left in its temporary parent: nothing, once it returned.
  size_t LeftInTemp(const DoctorOptions& o) {
    return size_t(std::distance(std::filesystem::directory_iterator(o.temp_parent), {}));
  }
};

TEST_F(DoctorTest, SlowStorageIsTheBottleneckAndPackingIsRecommended) {
  MakeTree(2, 15);  // small images: decoding them is fast
  testing::FaultEnv env;
  env.SlowReadsOf(".JPG", std::chrono::milliseconds(20));  // a remote file system's latency per file
  env.SlowReadsOf(".png", std::chrono::milliseconds(20));
  DoctorOptions o = Options();
  o.env = &env;
  o.model_rate = 1e6;
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_EQ(r.bottleneck, "storage");
  EXPECT_FALSE(r.packed_input);
  EXPECT_EQ(r.files_listed, 30u);
  EXPECT_GT(r.sample_files, 0u);
  EXPECT_LT(r.readn_files_per_s, r.crop_decode_per_core);  // the evidence the verdict rests on
  ASSERT_FALSE(r.actions.empty());
  EXPECT_EQ(r.actions[0].rfind("pack to wds (shardpack pack " + src() + " OUT)", 0), 0u) << r.actions[0];
  EXPECT_EQ(r.verdict.rfind("the input pipeline is the bottleneck", 0), 0u) << r.verdict;
  EXPECT_GT(r.loader_images_per_s, 0);
  EXPECT_EQ(LeftInTemp(o), 0u);
}

TEST_F(DoctorTest, LargePngsAreDecodeBound) {
  // PNGs of 1600x1200 in one colour: about 8 KB to read, 5.8 MB of pixels to inflate, so that decoding
  // outweighs reading by far in every build (measured: Release 58 decodes a second a core against
  // 8,000 reads a second on 2 threads; Debug with ASan 33 against 4,900). Noisy PNGs of 5 MB each left
  // a margin of 12 in Release and 3 to 10 under ASan, and a loaded CI machine once saw none.
  for (int i = 0; i < 8; ++i) {
    WriteFile(src() + "/c0/big" + std::to_string(i) + ".png",
              testing::EncodeWithOpenCv(std::string(1600 * 1200 * 3, char(30 * i)), 1600, 1200, ImageFormat::kPng));
  }
  DoctorOptions o = Options();
  o.crop = 224;
  o.model_rate = 1e6;
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_EQ(r.bottleneck, "decode");
  // The decode row is the crop-aware decode measured on both threads at once, not one core's x 2.
  ASSERT_GT(r.crop_decode_together, 0);
  const DoctorLayer* decode_row = Row(r, "decode");
  ASSERT_NE(decode_row, nullptr);
  EXPECT_EQ(decode_row->images_per_s, r.crop_decode_together);
  EXPECT_EQ(decode_row->detail.rfind("2 threads at once (crop-aware; ", 0), 0u) << decode_row->detail;
  EXPECT_LT(r.crop_decode_together, r.readn_files_per_s);
  EXPECT_EQ(r.median_width, 1600u);
  EXPECT_EQ(r.median_height, 1200u);
  EXPECT_DOUBLE_EQ(r.share_above_2x_crop, 1.0);  // 1200 > 448 for every image
  bool raw = false, fewer_pixels = false, threads = false;
  for (const std::string& a : r.actions) {
    raw = raw || a.rfind("pre-decode to raw", 0) == 0;
    fewer_pixels = fewer_pixels || a.rfind("fewer pixels at pack time: 100% of the images", 0) == 0;
    threads = threads || a.rfind("more threads", 0) == 0;
  }
  EXPECT_TRUE(raw && fewer_pixels && threads);
  // With buckets the share is of each image's own bucket: a 1600x1200 image goes to 1024x768 (the
  // nearest aspect, 4:3), and 1200 is not over 2 x 768; to 512x384, it is (it reported 448's share).
  o.buckets = {{1024, 768}, {768, 1024}};
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_DOUBLE_EQ(r.share_above_2x_crop, 0.0);
  o.buckets = {{512, 384}, {384, 512}};
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_DOUBLE_EQ(r.share_above_2x_crop, 1.0);
}

TEST_F(DoctorTest, AModelFarFasterThanTheLoaderIsStarvedAndAFarSlowerOneIsTheBottleneck) {
  MakeTree(2, 10);
  DoctorOptions o = Options();
  o.model_rate = 1e9;
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_NE(r.bottleneck, "gpu");
  EXPECT_EQ(r.verdict.rfind("the input pipeline is the bottleneck", 0), 0u) << r.verdict;

  o.model_rate = 1e-3;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_EQ(r.bottleneck, "gpu");
  EXPECT_EQ(r.verdict.rfind("the GPU is the bottleneck", 0), 0u) << r.verdict;
  EXPECT_TRUE(r.actions.empty());

  o.model_rate = 0;  // unknown: the verdict says how to measure it
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_NE(r.verdict.find("rerun with --model-rate"), std::string::npos) << r.verdict;
}

TEST_F(DoctorTest, ReadsNoMoreThanItsSample) {
  MakeTree(3, 10);
  DoctorOptions o = Options();
  o.sample_files = 8;
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_EQ(r.files_listed, 30u);
  EXPECT_EQ(r.sample_files, 8u);
  EXPECT_EQ(LeftInTemp(o), 0u);

  // The byte bound: each half of the sample stops once it has read half of sample_bytes, give or
  // take the file each thread had started.
  uint64_t largest = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(src())) {
    if (f.is_regular_file()) largest = std::max<uint64_t>(largest, f.file_size());
  }
  o.sample_files = 30;
  o.sample_bytes = 3 * largest;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_LT(r.sample_files, 30u);
  EXPECT_LE(r.sample_bytes, o.sample_bytes + 3 * largest);  // 1 + 2 threads, one file each past their half
}

TEST_F(DoctorTest, APackedDatasetIsMeasuredFromItsShards) {
  MakeTree(2, 10);
  PackResult pr;
  ASSERT_TRUE(PackTo(out(), QuietOptions(), &pr).ok());
  DoctorOptions o = Options();
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(out(), o, &r).ok());
  EXPECT_TRUE(r.packed_input);
  EXPECT_EQ(r.sample_files, 20u);
  EXPECT_GT(r.packed_mb_per_s, 0);
  EXPECT_GT(r.loader_images_per_s, 0);
}

TEST_F(DoctorTest, AHostToDeviceStageThatCannotRunSaysWhyInItsRow) {
  MakeTree(1, 6);
  DoctorOptions o = Options();
  o.host_to_device = [](uint64_t, double, HostToDeviceFigures*) {
    return Status::Unsupported("no usable CUDA device: no CUDA-capable device is detected");
  };
  DoctorReport r;
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_FALSE(r.host_to_device_measured);
  ASSERT_FALSE(r.layers.empty());
  EXPECT_EQ(r.layers.back().name, "host to device");
  EXPECT_EQ(r.layers.back().detail, "not measured: no usable CUDA device: no CUDA-capable device is detected");
  o.host_to_device = nullptr;  // a build without CUDA
  ASSERT_TRUE(RunDoctor(src(), o, &r).ok());
  EXPECT_EQ(r.layers.back().detail, "not measured: this shardpack was built without CUDA");
}

TEST_F(DoctorTest, AFolderWithoutImagesIsAClearError) {
  WriteFile(src() + "/notes.txt", "no images here");
  DoctorReport r;
  const Status s = RunDoctor(src(), Options(), &r);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), "no images in " + src() + " (jpg, jpeg, png, webp, bmp)");
}

// An image folder at /data/train measured on 4 threads of 8 cores, decode-bound: files read at
// 5,000/s, the crop decoded at 100 images/s a core, transformed at 1,000; the rest is each test's.
DoctorReport DecodeBoundFolderOnFourThreads() {
  DoctorReport r;
  r.path = "/data/train";
  r.threads = 4;
  r.cores = 8;
  r.readn_files_per_s = 5000;
  r.crop_decode_per_core = 100;
  r.transform_per_core = 1000;
  return r;
}

// The verdict's arithmetic on figures given by hand.
TEST(DoctorVerdict, DecodeBoundCountsTheCoresTheModelNeeds) {
  DoctorReport r = DecodeBoundFolderOnFourThreads();  // 400 images/s of decode at 4 threads: the slowest layer
  r.full_decode_per_core = 80;
  r.mean_image_bytes = 100'000;
  r.share_above_2x_crop = 0.1;
  DoctorOptions o;
  o.crop = 224;
  o.model_rate = 450;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "decode");
  // Decode and transform share the threads: 1 / (1/100 + 1/1000) = 90.9 images/s a core, x 4 = 363.6.
  EXPECT_NEAR(r.feed_today, 4000.0 / 11, 1e-9);
  ASSERT_EQ(r.layers.size(), 4u);
  EXPECT_EQ(r.layers[0].name, "storage");  // fastest first; host to device (not measured) last
  EXPECT_EQ(r.layers[3].name, "host to device");
  // 1 - 363.6 / 450 = 19%.
  EXPECT_EQ(r.verdict,
            "the input pipeline is the bottleneck: it feeds 364 images/s (decode and transform sharing 4 threads, "
            "90.9 images/s per core (estimate)) and the model takes 450 images/s; the GPU waits 19% of the time");
  ASSERT_EQ(r.actions.size(), 2u);  // 10% of large images: no advice to shrink them
  // ceil(450 / 90.9) = 5 cores; 224 x 224 x 3 = 150,528 bytes = 1.5x the 100 kB encoded.
  EXPECT_EQ(r.actions[0],
            "more threads: at 90.9 images/s per core, 450 images/s needs 5 cores (this machine has 8; "
            "estimate)");
  EXPECT_EQ(r.actions[1].rfind("pre-decode to raw (shardpack pack SRC OUT --format raw --crop 224): no decode at "
                               "load time; costs 151 KB of disk per image, 1.5x the encoded size (estimate)",
                               0),
            0u)
      << r.actions[1];
}

// Cores decoding together are each slower than one alone: the decode row and the estimate take the
// rate measured on every thread at once (300 images/s on 4 threads, where one core alone did 100).
TEST(DoctorVerdict, TheDecodeRowIsTheRateOfEveryThreadAtOnce) {
  DoctorReport r = DecodeBoundFolderOnFourThreads();
  r.crop_decode_together = 300;
  r.full_decode_per_core = 80;
  DoctorOptions o;
  o.model_rate = 450;
  DrawVerdict(o, &r);
  const DoctorLayer* decode_row = Row(r, "decode");
  ASSERT_NE(decode_row, nullptr);
  EXPECT_DOUBLE_EQ(decode_row->images_per_s, 300);
  EXPECT_EQ(decode_row->detail,
            "4 threads at once (crop-aware; 100 images/s on one core alone), 80.0 images/s per core (whole image)");
  // 300 / 4 = 75 a core while all decode; with the transform: 1 / (1/75 + 1/1000) = 69.77 a core, x 4.
  EXPECT_NEAR(r.feed_today, 4 / (1.0 / 75 + 1.0 / 1000), 1e-9);
}

TEST(DoctorVerdict, WithBucketsPreDecodingKeepsEachImageWholeForTheBucketsToCut) {
  DoctorReport r = DecodeBoundFolderOnFourThreads();
  r.mean_image_bytes = 200'000;
  r.median_megapixels = 0.25;
  DoctorOptions o;
  o.buckets = {{1024, 1024}, {1152, 896}};
  o.model_rate = 450;
  const DoctorReport fresh = r;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "decode");
  ASSERT_EQ(r.actions.size(), 2u);  // (share_above_2x_crop 0: no "fewer pixels")
  // 0.25 megapixels x 3 bytes = 750 kB = 3.8x the 200 kB encoded; no fixed crop offered.
  EXPECT_EQ(r.actions[1],
            "pre-decode to raw at each image's own size (shardpack pack SRC OUT --format raw --keep-size): no decode "
            "at load time, and the buckets still cut each image as it loads; costs 750 KB of disk per image at the "
            "median size, 3.8x the encoded size (estimate)");
  // Most images over 2x their bucket: fewer pixels at pack time, at twice the largest bucket side
  // (1152 of 1152x896).
  DoctorReport large = fresh;
  large.share_above_2x_crop = 0.6;
  DrawVerdict(o, &large);
  ASSERT_EQ(large.actions.size(), 3u);
  EXPECT_EQ(large.actions[2],
            "fewer pixels at pack time: 60% of the images have a shorter side over 2x their bucket's (median 0.2 "
            "megapixels); decode time grows with pixels, so packing with --max-side 2304 (2x the largest bucket "
            "side) pays on every epoch (estimate)");
  // A packed dataset is converted, not packed again from a source folder it may not have.
  DoctorReport p = fresh;
  p.packed_input = true;
  p.path = "/data/packed";
  p.packed_images_per_s = 1e6;  // storage far from the bottleneck
  p.packed_mb_per_s = 500;
  const auto advice = [&p](const std::string& start) {
    for (const std::string& a : p.actions) {
      if (a.rfind(start, 0) == 0) return a;
    }
    return std::string("no action starts with: ") + start;
  };
  DrawVerdict(o, &p);
  const std::string keep =
      "pre-decode to raw at each image's own size (shardpack convert /data/packed OUT --format raw "
      "--keep-size): no decode at load time";
  EXPECT_EQ(advice(keep).substr(0, keep.size()), keep);
  p = fresh;
  p.packed_input = true;
  p.path = "/data/packed";
  p.packed_images_per_s = 1e6;
  p.packed_mb_per_s = 500;
  o.buckets.clear();
  o.crop = 224;
  DrawVerdict(o, &p);
  const std::string crop = "pre-decode to raw (shardpack convert /data/packed OUT --format raw --crop 224)";
  EXPECT_EQ(advice(crop).substr(0, crop.size()), crop);
}

// A packed dataset at /data/packed measured on 2 threads of 2 cores; the rates are each test's.
DoctorReport PackedOnTwoCores() {
  DoctorReport r;
  r.path = "/data/packed";
  r.packed_input = true;
  r.threads = 2;
  r.cores = 2;
  return r;
}

// A billion samples over 100,000 shards (measured: 6,174 MB/s front to back, the loader 4,456
// images/s): the loader's global shuffle reads at random, and the advice is the order, not the disk
// (it said "storage is slow even for sequential reads (6174.3 MB/s)"). Storage that is slow front to
// back too still gets the advice to move the data.
TEST(DoctorVerdict, RandomReadsOverFastSequentialStorageAdviseTheStreamingShuffle) {
  DoctorReport r = PackedOnTwoCores();
  r.packed_mb_per_s = 6174.3;
  r.packed_images_per_s = 1'269'552;
  r.crop_decode_per_core = 22'217;
  r.transform_per_core = 23'716;
  r.loader_images_per_s = 4'456;
  r.loader_slowest_stage = "read";
  DoctorOptions o;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "storage");
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0],
            "the loader's random reads are the limit, not the storage's speed: the shards read front to back at "
            "6174.3 MB/s (1269552 images/s), but the global shuffle reads each sample from a random shard (loading "
            "that shard's index): 4456 images/s. The streaming shuffle reads shards front to back: measure it with "
            "shardpack bench /data/packed --shuffle-buffer 10000 (Loader(shuffle_buffer=10000)), and its mixing in "
            "bench's shuffle quality");
  // Front to back under twice the loader's rate: the storage itself is slow.
  r.packed_mb_per_s = 40;
  r.packed_images_per_s = 8'000;
  DrawVerdict(o, &r);
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0],
            "storage is slow even for sequential reads (40.0 MB/s): copy the dataset to local disk, or read it from "
            "an object store with a cache (docs/remote.md)");
}

// The case a user met: decode alone at 2 threads (1,691 images/s) was given as the feed while the
// loader row beside it said 757. The loader measures decode, transform and reads together as the
// training path runs them, so its rate is the feed, and the advice is computed from it.
TEST(DoctorVerdict, TheFeedIsNeverAboveTheLoaderRowPrintedBesideIt) {
  DoctorReport r = PackedOnTwoCores();
  r.packed_images_per_s = 50'000;
  r.crop_decode_per_core = 845.5;  // the decode row: 1,691 images/s
  r.transform_per_core = 6'000;
  r.loader_images_per_s = 758;
  r.loader_slowest_stage = "decode+transform";
  DoctorOptions o;
  o.model_rate = 2'500;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "decode");
  EXPECT_DOUBLE_EQ(r.feed_today, 758);
  // 1 - 758 / 2,500 = 70%.
  EXPECT_EQ(r.verdict,
            "the input pipeline is the bottleneck: it feeds 758 images/s (the loader's measured rate; slowest stage: "
            "decode+transform) and the model takes 2500 images/s; the GPU waits 70% of the time");
  ASSERT_FALSE(r.actions.empty());
  // 758 / 2 = 379 a core; ceil(2,500 / 379) = 7.
  EXPECT_EQ(r.actions[0],
            "more threads: at 379 images/s per core (the loader's 758 images/s over 2 threads), 2500 images/s needs "
            "7 cores (this machine has 2; estimate)");

  // Storage slower than the loader's rate bounds the feed on its own.
  r.packed_images_per_s = 300;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "storage");
  EXPECT_DOUBLE_EQ(r.feed_today, 300);
  EXPECT_EQ(r.verdict.rfind("the input pipeline is the bottleneck: it feeds 300 images/s (slowest layer: storage)", 0),
            0u)
      << r.verdict;

  // A model slower than the loader: the GPU is the bottleneck, with the loader's figure.
  r.packed_images_per_s = 50'000;
  o.model_rate = 500;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "gpu");
  EXPECT_EQ(r.verdict,
            "the GPU is the bottleneck: the input pipeline feeds 758 images/s (the loader's measured rate; slowest "
            "stage: decode+transform) and the model takes 500 images/s (1.5x headroom)");
}

TEST(DoctorVerdict, PageableCopiesThatLimitAdvisePinnedMemory) {
  DoctorReport r;
  r.path = "/data/train";
  r.threads = 16;
  r.cores = 16;
  r.readn_files_per_s = 50'000;
  r.crop_decode_per_core = 2'000;
  r.transform_per_core = 10'000;
  r.host_to_device_measured = true;
  r.host_to_device = {2.0, 20.0, 0, "NVIDIA H200"};
  r.host_to_device_images_per_s = 9'000;  // below decode's 32,000: the copy limits
  DoctorOptions o;
  o.model_rate = 20'000;
  DrawVerdict(o, &r);
  EXPECT_EQ(r.bottleneck, "host to device");
  EXPECT_EQ(r.layers.back().detail, "pinned 20.0 GB/s, pageable 2.0 GB/s (NVIDIA H200)");
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0].rfind("copy from pinned memory (shardpack.Loader(device=\"cuda\") does: 20.0 GB/s against "
                               "2.0 GB/s pageable, measured)",
                               0),
            0u)
      << r.actions[0];
}

}  // namespace
}  // namespace shardpack
