#include "shardpack/pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/wds/dali_index.h"
#include "formats/wds/tar_shard_reader.h"
#include "formats/wds/wds_naming.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/fault_env.h"

namespace shardpack {
namespace {

using testing::DatasetTest;
using testing::FaultEnv;
using testing::MakeImage;
using testing::ReadFile;
using testing::WriteFile;

struct ReadSample {
  std::string key;
  std::map<std::string, std::string> members;  // ext -> bytes
};

// Reads every sample of every shard in manifest order, through libarchive.
std::vector<ReadSample> ReadAll(const std::string& dir, const Manifest& m) {
  std::vector<ReadSample> samples;
  for (const ShardEntry& shard : m.shards) {
    std::unique_ptr<TarShardReader> r;
    EXPECT_TRUE(TarShardReader::Open(Env::Default(), dir + "/" + shard.file, &r).ok());
    for (;;) {
      TarMember member;
      bool done = false;
      EXPECT_TRUE(r->Next(&member, &done).ok());
      if (done) break;
      std::string key, ext, data;
      EXPECT_TRUE(SplitWdsMemberName(member.name, &key, &ext));
      EXPECT_TRUE(r->ReadData(1 << 30, &data).ok());
      if (samples.empty() || samples.back().key != key) samples.push_back({key, {}});
      samples.back().members[ext] = data;
    }
  }
  return samples;
}

std::vector<std::string> DirListing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(DatasetTest, RoundTripKeepsBytesLabelsAndMetadata) {
  std::vector<std::string> paths = MakeTree(3, 5);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  EXPECT_EQ(r.manifest.samples, 15u);
  EXPECT_EQ(r.manifest.classes, (std::vector<std::string>{"c0", "c1", "c2"}));
  std::vector<ReadSample> samples = ReadAll(out(), r.manifest);
  ASSERT_EQ(samples.size(), paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const ReadSample& s = samples[i];
    EXPECT_EQ(s.key, IndexKey(i));
    const bool png = paths[i].find(".png") != std::string::npos;
    ASSERT_EQ(s.members.count(png ? "png" : "jpg"), 1u) << paths[i];
    EXPECT_EQ(s.members.at(png ? "png" : "jpg"), ReadFile(src() + "/" + paths[i]));
    EXPECT_EQ(s.members.at("cls"), std::string(1, paths[i][1]));
    nlohmann::json meta = nlohmann::json::parse(s.members.at("json"));
    EXPECT_EQ(meta["path"], paths[i]);
    EXPECT_EQ(meta["class"], paths[i].substr(0, 2));
    EXPECT_EQ(meta["width"], 24 + int(i % 5));
    EXPECT_EQ(meta["height"], 16 + int(i / 5));
  }
}

TEST_F(DatasetTest, UnlabelledTreeHasNoClsMember) {
  testing::WriteFile(src() + "/a.jpg", MakeImage(ImageFormat::kJpeg, 20, 20, 1));
  testing::WriteFile(src() + "/b.webp", MakeImage(ImageFormat::kWebp, 20, 20, 2));
  PackResult r;
  ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  std::vector<ReadSample> samples = ReadAll(out(), r.manifest);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].members.count("cls"), 0u);
  EXPECT_EQ(samples[1].members.count("webp"), 1u);
  EXPECT_TRUE(nlohmann::json::parse(samples[0].members.at("json"))["class"].is_null());
}

TEST_F(DatasetTest, RollsOverAtSamplesPerShard) {
  MakeTree(5, 5);
  PackOptions o = QuietOptions();
  o.samples_per_shard = 10;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ASSERT_EQ(r.manifest.shards.size(), 3u);
  EXPECT_EQ(r.manifest.shards[0].samples, 10u);
  EXPECT_EQ(r.manifest.shards[1].samples, 10u);
  EXPECT_EQ(r.manifest.shards[2].samples, 5u);
  EXPECT_EQ(r.manifest.shards[2].file, "shard-000002.tar");
}

TEST_F(DatasetTest, RollsOverBeforeShardSizeIsExceeded) {
  MakeTree(2, 10);
  PackOptions o = QuietOptions();
  o.shard_size_bytes = 8192;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  EXPECT_GT(r.manifest.shards.size(), 3u);
  uint64_t total = 0;
  for (const ShardEntry& s : r.manifest.shards) {
    EXPECT_LE(s.bytes, 8192u) << s.file;
    EXPECT_EQ(s.bytes, std::filesystem::file_size(out() + "/" + s.file));
    total += s.samples;
  }
  EXPECT_EQ(total, 20u);
}

TEST_F(DatasetTest, OutputIsByteIdenticalWhateverTheThreadCount) {
  MakeTree(4, 10);
  for (bool shuffle : {false, true}) {
    std::vector<std::string> first_files;
    std::string first_dir;
    // The pool runs at most one thread per core (2 on CI's machine), so 1 against 2 is the
    // comparison every machine can make.
    for (int threads : {1, 2}) {
      PackOptions o = QuietOptions();
      o.threads = threads;
      o.shuffle = shuffle;
      o.seed = 7;
      o.samples_per_shard = 15;
      // Same folder name everywhere: the manifest records it.
      const std::string dir = out("t" + std::to_string(threads) + (shuffle ? "s" : "")) + "/data";
      PackResult r;
      ASSERT_TRUE(PackTo(dir, o, &r).ok());
      std::vector<std::string> files = DirListing(dir);
      if (first_dir.empty()) {
        first_dir = dir;
        first_files = files;
        continue;
      }
      ASSERT_EQ(files, first_files);
      for (const std::string& f : files) {
        EXPECT_EQ(ReadFile(dir + "/" + f), ReadFile(first_dir + "/" + f)) << f << " threads=" << threads;
      }
    }
  }
}

TEST_F(DatasetTest, ShuffleDependsOnlyOnTheSeed) {
  std::vector<std::string> paths = MakeTree(2, 10);
  auto order = [&](bool shuffle, uint64_t seed, const std::string& name) {
    PackOptions o = QuietOptions();
    o.shuffle = shuffle;
    o.seed = seed;
    PackResult r;
    EXPECT_TRUE(PackTo(out(name), o, &r).ok());
    std::vector<std::string> rel;
    for (const ReadSample& s : ReadAll(out(name), r.manifest)) {
      rel.push_back(nlohmann::json::parse(s.members.at("json"))["path"]);
    }
    return rel;
  };
  std::vector<std::string> plain = order(false, 0, "plain");
  std::vector<std::string> a = order(true, 1, "a"), b = order(true, 1, "b"), c = order(true, 2, "c");
  EXPECT_EQ(plain, paths);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, plain);
  EXPECT_NE(a, c);
  std::vector<std::string> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> sorted_paths = paths;
  std::sort(sorted_paths.begin(), sorted_paths.end());
  EXPECT_EQ(sorted, sorted_paths);  // a permutation: nothing lost, nothing repeated
}

TEST_F(DatasetTest, PathKeysComeFromRelativePaths) {
  MakeTree(1, 2);
  PackOptions o = QuietOptions();
  o.path_keys = true;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  std::vector<ReadSample> samples = ReadAll(out(), r.manifest);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].key, "c0_img0");
  EXPECT_EQ(samples[1].key, "c0_img1");
}

TEST_F(DatasetTest, StrictStopsAtFirstBadInputAndLeavesNoManifest) {
  MakeTree(1, 3);
  WriteFile(src() + "/c0/img1.JPG", "");
  PackOptions o = QuietOptions();
  o.strict = true;
  PackResult r;
  Status s = PackTo(out(), o, &r);
  EXPECT_EQ(s.code(), Status::Code::kAborted);
  EXPECT_EQ(s.message(), "c0/img1.JPG: empty file (--strict stops at the first bad input)");
  EXPECT_FALSE(std::filesystem::exists(out() + "/manifest.json"));
}

TEST_F(DatasetTest, DecodeCheckCatchesDamageTheHeaderProbeMisses) {
  MakeTree(1, 2);
  std::string jpeg = MakeImage(ImageFormat::kJpeg, 64, 48, 3);
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 64; ++i) jpeg[i] = '\xFF';
  WriteFile(src() + "/c0/damaged.jpg", jpeg);
  PackResult header, decode;
  ASSERT_TRUE(PackTo(out("h"), QuietOptions(), &header).ok());
  PackOptions o = QuietOptions();
  o.decode_check = true;
  ASSERT_TRUE(PackTo(out("d"), o, &decode).ok());
  EXPECT_EQ(header.manifest.samples, 3u);
  EXPECT_EQ(decode.manifest.samples, 2u);
  ASSERT_EQ(decode.manifest.skipped.size(), 1u);
  EXPECT_EQ(decode.manifest.skipped[0].path, "c0/damaged.jpg");
}

TEST_F(DatasetTest, ImagesOverThePixelLimitAreSkipped) {
  MakeTree(1, 2);
  PackOptions o = QuietOptions();
  o.max_pixels = 25 * 16;  // img0 is 24x16, img1 25x16, both fit; a larger one does not
  WriteFile(src() + "/c0/big.jpg", MakeImage(ImageFormat::kJpeg, 30, 20, 1));
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ASSERT_EQ(r.manifest.skipped.size(), 1u);
  EXPECT_EQ(r.manifest.skipped[0].reason, "image declares 30x20 pixels, more than --max-pixels 400");
}

TEST_F(DatasetTest, RefusesNonEmptyOutputUnlessForced) {
  MakeTree(1, 2);
  WriteFile(out() + "/shard-000009.tar", "old");
  WriteFile(out() + "/notes.md", "mine");
  PackResult r;
  Status s = PackTo(out(), QuietOptions(), &r);
  EXPECT_EQ(s.message(),
            "output folder " + out() + " is not empty; choose an empty folder or pass --force to replace its dataset");
  PackOptions o = QuietOptions();
  o.force = true;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  EXPECT_EQ(DirListing(out()), (std::vector<std::string>{"manifest.json", "notes.md", "shard-000000.idx",
                                                         "shard-000000.samples.tsv", "shard-000000.tar"}));
}

TEST_F(DatasetTest, FailureMidPackLeavesNoManifestAndNoTemporaryShard) {
  MakeTree(2, 5);
  PackOptions o = QuietOptions();
  o.samples_per_shard = 3;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());  // an old, complete dataset
  FaultEnv env;
  env.FailCreationOf("shard-000002.tar.tmp");
  o.env = &env;
  o.force = true;
  Status s = PackTo(out(), o, &r);
  // Shard 1 was published when shard 2 could not be created, before the journal recorded it.
  EXPECT_EQ(s.message(), "cannot create " + out() +
                             "/shard-000002.tar.tmp: No space left on device (1 complete shard kept in " + out() +
                             "; rerun the same command with --resume to continue once fixed)");
  EXPECT_EQ(
      DirListing(out()),
      (std::vector<std::string>{"pack-journal.json", "shard-000000.idx", "shard-000000.samples.tsv", "shard-000000.tar",
                                "shard-000001.idx", "shard-000001.samples.tsv", "shard-000001.tar"}));
}

TEST_F(DatasetTest, RefusesOutputInsideSource) {
  MakeTree(1, 1);
  PackResult r;
  Status s = Pack(src(), src() + "/c0/out/new", QuietOptions(), &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "output folder " + src() + "/c0/out/new lies inside the source folder " + src() +
                             "; choose an output folder outside it");
  // Refused before anything was created: the source keeps its files only.
  EXPECT_FALSE(Env::Default()->FileExists(src() + "/c0/out"));
  // Also through a symbolic link to a folder of the source, and for OUT = SRC itself.
  std::filesystem::create_directory_symlink(src() + "/c0", dir_.Sub("link"));
  EXPECT_EQ(Pack(src(), dir_.Sub("link") + "/out", QuietOptions(), &r).code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(Env::Default()->FileExists(src() + "/c0/out"));
  EXPECT_EQ(Pack(src(), src(), QuietOptions(), &r).code(), Status::Code::kInvalidArgument);
}

TEST_F(DatasetTest, ManifestDescribesEveryShardForWids) {
  MakeTree(2, 6);
  PackOptions o = QuietOptions();
  o.samples_per_shard = 5;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  nlohmann::json j = nlohmann::json::parse(ReadFile(out() + "/manifest.json"));
  EXPECT_EQ(j["wids_version"], 1);
  EXPECT_EQ(j["__kind__"], "wids-shard-index-v1");
  EXPECT_EQ(j["format"], "wds");
  EXPECT_EQ(j["samples"], 12);
  ASSERT_EQ(j["shardlist"].size(), 3u);
  for (const auto& s : j["shardlist"]) {
    const std::string file = s["url"];
    EXPECT_EQ(s["filesize"], std::filesystem::file_size(out() + "/" + file));
    EXPECT_EQ(s["xxh64"], ChecksumHex(Xxh64(ReadFile(out() + "/" + file))));
    EXPECT_EQ(s["index"]["xxh64"], ChecksumHex(Xxh64(ReadFile(out() + "/" + std::string(s["index"]["file"])))));
  }
  EXPECT_EQ(j["shardlist"][2]["nsamples"], 2);
  EXPECT_EQ(j["options"]["samples_per_shard"], 5);
  EXPECT_EQ(j["options"].count("threads"), 0u);  // output must not depend on it
}

TEST_F(DatasetTest, DaliIndexOffsetsPointAtMemberData) {
  std::vector<std::string> paths = MakeTree(2, 3);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), QuietOptions(), &r).ok());
  const std::string tar = ReadFile(out() + "/shard-000000.tar");
  std::vector<DaliIndexSample> index;
  ASSERT_TRUE(ParseDaliIndex(ReadFile(out() + "/shard-000000.idx"), &index).ok());
  ASSERT_EQ(index.size(), paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    ASSERT_EQ(index[i].size(), 3u);
    EXPECT_EQ(index[i][0].ext, "cls");
    EXPECT_EQ(index[i][0].name, IndexKey(i) + ".cls");
    for (const DaliIndexMember& m : index[i]) {
      if (m.ext == "jpg" || m.ext == "png") {
        EXPECT_EQ(tar.substr(m.offset, m.size), ReadFile(src() + "/" + paths[i])) << m.name;
      }
    }
  }
}

TEST_F(DatasetTest, EmptySourceFails) {
  std::filesystem::create_directories(src());
  PackResult r;
  Status s = PackTo(out(), QuietOptions(), &r);
  EXPECT_EQ(s.message(), "no images to pack in " + src() + " (0 files skipped)");
  EXPECT_FALSE(std::filesystem::exists(out() + "/manifest.json"));
}

TEST_F(DatasetTest, OptionsThatDoNotFitTheFormatAreRefused) {
  MakeTree(1, 1);
  PackOptions o = QuietOptions();
  PackResult r;
  o.format = DatasetFormat::kRaw;
  EXPECT_EQ(PackTo(out(), o, &r).message(), "--format raw needs --crop H[xW] (fixed-size images) or --keep-size");
  o.keep_size = true;
  o.crop_height = o.crop_width = 8;
  EXPECT_EQ(PackTo(out(), o, &r).message(), "--keep-size and --crop exclude each other");
  o.format = DatasetFormat::kWebDataset;
  EXPECT_EQ(PackTo(out(), o, &r).message(), "--resize, --crop and --keep-size apply to --format raw only");
  DatasetFormat parsed = DatasetFormat::kWebDataset;
  EXPECT_EQ(ParseDatasetFormat("tfrecord", &parsed).message(), "unknown format 'tfrecord'; use wds, lmdb or raw");
}

}  // namespace
}  // namespace shardpack
