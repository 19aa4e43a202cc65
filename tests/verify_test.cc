#include "shardpack/verify.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/common/shard_check.h"
#include "formats/wds/dali_index.h"
#include "ground/checksum.h"
#include "ground/manifest_json.h"
#include "shardpack/buckets.h"
#include "shardpack/manifest.h"
#include "shardpack/stat.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::ReadFile;
using testing::WriteFile;

class VerifyTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    MakeTree(2, 5);
    PackOptions o = QuietOptions();
    o.samples_per_shard = 4;
    ASSERT_TRUE(PackTo(out(), o, &packed_).ok());
  }

  VerifyReport Run(bool decode = false) {
    VerifyOptions o;
    o.decode = decode;
    VerifyReport report;
    EXPECT_TRUE(Verify(out(), o, &report).ok());
    return report;
  }

  static bool Has(const VerifyReport& r, const std::string& shard, const std::string& key, const std::string& what) {
    for (const VerifyProblem& p : r.problems) {
      if (p.shard == shard && p.key == key && p.what == what) return true;
    }
    return false;
  }

  static std::string Dump(const VerifyReport& r) {
    std::string s;
    for (const VerifyProblem& p : r.problems) s += p.shard + " | " + p.key + " | " + p.what + "\n";
    return s;
  }

  // Offset of the image data of sample `i` in shard 0, from the DALI index.
  uint64_t ImageOffset(size_t i) {
    std::vector<DaliIndexSample> index;
    EXPECT_TRUE(ParseDaliIndex(ReadFile(out() + "/shard-000000.idx"), &index).ok());
    return index[i][1].offset;
  }

  PackResult packed_;
};

TEST_F(VerifyTest, CleanDatasetPasses) {
  VerifyReport r = Run(/*decode=*/true);
  EXPECT_TRUE(r.clean()) << Dump(r);
  EXPECT_EQ(r.shards, 3u);
  EXPECT_EQ(r.samples, 10u);
  EXPECT_EQ(r.images_decoded, 10u);
  EXPECT_EQ(r.bytes, packed_.manifest.bytes);
}

TEST_F(VerifyTest, FlippedByteIsPinnedToItsSample) {
  const std::string path = out() + "/shard-000000.tar";
  std::string bytes = ReadFile(path);
  bytes[ImageOffset(2) + 100] ^= 0x01;
  WriteFile(path, bytes);
  VerifyReport r = Run();
  EXPECT_TRUE(Has(r, "shard-000000.tar", "000000002", "checksum mismatch: bytes of this sample changed")) << Dump(r);
  EXPECT_EQ(r.problems.size(), 2u) << Dump(r);  // the sample and the whole-shard checksum
}

TEST_F(VerifyTest, TruncatedShardIsReported) {
  const std::string path = out() + "/shard-000001.tar";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3000);
  VerifyReport r = Run();
  EXPECT_FALSE(r.clean());
  const uint64_t expected = packed_.manifest.shards[1].bytes;
  EXPECT_TRUE(Has(r, "shard-000001.tar", "",
                  "file is " + std::to_string(expected - 3000) + " bytes, manifest says " + std::to_string(expected) +
                      " (truncated)"))
      << Dump(r);
  EXPECT_TRUE(Has(r, "shard-000001.tar", "000000007", "sample lies past the end of the file (truncated)")) << Dump(r);
}

TEST_F(VerifyTest, MissingAndExtraShardsAreReported) {
  std::filesystem::rename(out() + "/shard-000002.tar", out() + "/shard-000099.tar");
  VerifyReport r = Run();
  EXPECT_TRUE(Has(r, "shard-000002.tar", "", "shard file is missing")) << Dump(r);
  EXPECT_TRUE(Has(r, "shard-000099.tar", "", "shard file is not listed in the manifest")) << Dump(r);
}

TEST_F(VerifyTest, DamagedIndexIsReported) {
  const std::string path = out() + "/shard-000000.idx";
  std::string text = ReadFile(path);
  text[text.find(" 512 ") + 1] = '6';  // the first member's offset 512 becomes 612
  WriteFile(path, text);
  VerifyReport r = Run();
  EXPECT_TRUE(Has(r, "shard-000000.tar", "", "shard-000000.idx: checksum mismatch (file changed since pack)"))
      << Dump(r);
  EXPECT_TRUE(Has(r, "shard-000000.tar", "000000000",
                  "DALI index entry (000000000.cls at 612, 1 bytes) does not match the tar member "
                  "(000000000.cls at 512, 1 bytes)"))
      << Dump(r);
}

TEST_F(VerifyTest, ManifestSampleCountMismatchIsReported) {
  const std::string path = out() + "/manifest.json";
  nlohmann::json j = nlohmann::json::parse(ReadFile(path));
  j["samples"] = 11;
  WriteFile(path, j.dump());
  VerifyReport r = Run();
  EXPECT_TRUE(Has(r, "", "", "manifest lists 11 samples but its shards add up to 10")) << Dump(r);
}

TEST_F(VerifyTest, ManifestWithoutItsChecksumIsRefusedEvenWhenOnlyAClassNameChanged) {
  // Relabelling the classes by hand and dropping the checksum that would betray it: every
  // structural check still passes, so only the missing checksum can tell.
  const std::string path = out() + "/manifest.json";
  nlohmann::json j = nlohmann::json::parse(ReadFile(path));
  ASSERT_TRUE(j.contains("manifest_xxh64"));
  j.erase("manifest_xxh64");
  ASSERT_FALSE(j["classes"].empty());
  j["classes"][0] = "renamed";
  WriteFile(path, j.dump(2) + "\n");
  VerifyReport r = Run();
  ASSERT_EQ(r.problems.size(), 1u) << Dump(r);
  EXPECT_EQ(r.problems[0].what, path +
                                    " has no manifest_xxh64 field, which pack always writes: it was rewritten after "
                                    "pack; repack, or restore the manifest pack wrote");
}

TEST_F(VerifyTest, ManifestWhoseClassListChangedIsReported) {
  const std::string path = out() + "/manifest.json";
  nlohmann::json j = nlohmann::json::parse(ReadFile(path));
  j["classes"][0] = "renamed";
  WriteFile(path, j.dump(2) + "\n");
  VerifyReport r = Run();
  ASSERT_EQ(r.problems.size(), 1u) << Dump(r);
  EXPECT_EQ(r.problems[0].what,
            path + " was changed after pack wrote it (its manifest_xxh64 does not match its contents)");
}

TEST_F(VerifyTest, DecodeFindsImagesThatNoLongerDecode) {
  // Damage image data and the checksums with it, as a writer bug would: only decoding can tell.
  const std::string path = out() + "/shard-000000.tar";
  std::string bytes = ReadFile(path);
  const size_t scan = bytes.find("\xFF\xDA", ImageOffset(1));  // start of scan: entropy-coded data follows
  for (size_t i = scan + 20; i < scan + 60; ++i) bytes[i] = '\xFF';
  WriteFile(path, bytes);
  VerifyReport r = Run(/*decode=*/true);
  bool found = false;
  for (const VerifyProblem& p : r.problems) {
    if (p.key == "000000001" && p.what.rfind("cannot decode 000000001.jpg: JPEG data:", 0) == 0) found = true;
  }
  EXPECT_TRUE(found) << Dump(r);
}

// A sample table forged to claim another size (its checksum in the manifest forged to match, as
// a writer who knows the format would): buckets, --where and stat trust the columns, so --decode
// compares them with the image (a forged 4294967295x1 passed verify --decode before).
TEST_F(VerifyTest, DecodeComparesTheRecordedSizeWithTheImage) {
  const std::string table = out() + "/shard-000000.samples.tsv";
  std::string text = ReadFile(table);
  const size_t line = text.find('\n') + 1, end = text.find('\n', line);
  std::vector<std::string> columns;
  for (size_t at = line, tab; at <= end; at = tab + 1) {
    tab = std::min(text.find('\t', at), end);
    columns.push_back(text.substr(at, tab - at));
  }
  ASSERT_EQ(columns.size(), 8u) << text.substr(line, end - line);  // key ... format width height
  const std::string width = columns[6], height = columns[7];       // as pack recorded them
  columns[6] = "4294967295";
  columns[7] = "1";
  std::string forged;
  for (const std::string& c : columns) forged += (forged.empty() ? "" : "\t") + c;
  text.replace(line, end - line, forged);
  WriteFile(table, text);
  Manifest m;
  ASSERT_TRUE(ReadManifest(Env::Default(), out(), &m).ok());
  m.shards[0].sample_table.xxh64 = ChecksumHex(Xxh64(text));
  ASSERT_TRUE(WriteManifest(Env::Default(), out(), m).ok());
  EXPECT_TRUE(Run().clean()) << Dump(Run());  // the structure and checksums all match
  const VerifyReport r = Run(/*decode=*/true);
  EXPECT_TRUE(Has(r, "shard-000000.tar", columns[0],
                  columns[0] + ".jpg is " + width + "x" + height + " pixels; the sample table records 4294967295x1") ||
              Has(r, "shard-000000.tar", columns[0],
                  columns[0] + ".png is " + width + "x" + height + " pixels; the sample table records 4294967295x1"))
      << Dump(r);
  EXPECT_EQ(r.problems.size(), 1u) << Dump(r);
}

// verify --decode of a dataset whose manifest records a resolution bound (pack --max-side).
TEST(ResolutionBoundProblem, NamesTheSizeAndTheBound) {
  Manifest m;
  DecodedImage image;
  image.width = 120, image.height = 80;
  EXPECT_EQ(ResolutionBoundProblem(m, "", image), "");  // no bound
  m.options_json = R"({"max_side":{"filter":"area","jpeg_quality":90,"of":"long","side":100}})";
  EXPECT_EQ(ResolutionBoundProblem(m, "", image),
            "image is 120x80 as shown, over the dataset's bound of 100 pixels on its long side (pack --max-side)");
  image.width = 100;
  EXPECT_EQ(ResolutionBoundProblem(m, "", image), "");  // the bound is inclusive
  m.options_json = R"({"max_side":{"of":"short","side":79}})";
  EXPECT_EQ(ResolutionBoundProblem(m, "", image),
            "image is 100x80 as shown, over the dataset's bound of 79 pixels on its short side (pack --max-side)");
}

TEST_F(VerifyTest, MissingManifestMeansNotADataset) {
  std::filesystem::remove(out() + "/manifest.json");
  VerifyReport r;
  Status s = Verify(out(), VerifyOptions(), &r);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), out() + "/manifest.json does not exist: " + out() +
                             " is not a packed dataset, or its pack did not finish (rerun pack)");
  EXPECT_EQ(Verify(out() + "/missing", VerifyOptions(), &r).message(),
            "dataset folder " + out() + "/missing does not exist");
}

// Counts and sizes must be non-negative integers: nlohmann would cast a float or a negative number
// to uint64_t, undefined behaviour past its range (fuzz_manifest found "bytes": 7.2e122).
TEST_F(VerifyTest, ManifestCountsThatAreNotNonNegativeIntegersAreRefused) {
  const nlohmann::json good = nlohmann::json::parse(ReadFile(out() + "/manifest.json"));
  const std::string prefix = "manifest is malformed: ";
  const struct {
    const char* field;
    nlohmann::json value;
    std::string message;
  } cases[] = {
      {"bytes", 7.2e122, "\"bytes\" is 7.2e+122, not an integer from 0 to 18446744073709551615"},
      {"samples", -3, "\"samples\" is -3, not an integer from 0 to 18446744073709551615"},
      {"format_version", 1.5, "\"format_version\" is 1.5, not an integer from 0 to 2147483647"},
      {"shardpack_manifest_version", 4294967297ull,
       "\"shardpack_manifest_version\" is 4294967297, not an integer from 0 to 2147483647"},
      {"nsamples", 1e30, "\"nsamples\" is 1e+30, not an integer from 0 to 18446744073709551615"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = good;
    if (std::string(c.field) == "nsamples") {
      j["shardlist"][0]["nsamples"] = c.value;
    } else {
      j[c.field] = c.value;
    }
    Manifest m;
    const Status s = ManifestFromJson(j, &m);
    EXPECT_EQ(s.code(), Status::Code::kDataLoss) << c.field;
    EXPECT_EQ(s.message(), prefix + c.message);
  }
  // Options, which the raw reader and verifier take with json::value().
  const std::pair<nlohmann::json, std::string> options[] = {
      {{{"chunk_samples", 1e30}}, "option \"chunk_samples\" is 1e+30, not made of non-negative integers"},
      {{{"crop", {224, -1}}}, "option \"crop\" is [224,-1], not made of non-negative integers"},
      {{{"keep_size", "yes"}}, "option \"keep_size\" is not true or false"},
      {{{"compress", 1}}, "option \"compress\" is not a string"},
      {"zstd", "\"options\" is not an object"},
  };
  for (const auto& [value, message] : options) {
    nlohmann::json j = good;
    j["options"] = value;
    Manifest m;
    EXPECT_EQ(ManifestFromJson(j, &m).message(), prefix + message);
  }
  Manifest m;
  EXPECT_TRUE(ManifestFromJson(good, &m).ok());
  EXPECT_EQ(m.samples, 10u);
}

TEST_F(VerifyTest, StatSummarisesSamplesClassesAndSizes) {
  DatasetStats st;
  ASSERT_TRUE(Stat(out(), {}, &st).ok());
  EXPECT_EQ(st.samples, 10u);
  EXPECT_EQ(st.shards, 3u);
  ASSERT_EQ(st.classes.size(), 2u);
  EXPECT_EQ(st.classes[0].samples, 5u);
  EXPECT_EQ(st.classes[1].samples, 5u);
  EXPECT_EQ(st.image_formats["jpeg"], 8u);
  EXPECT_EQ(st.image_formats["png"], 2u);
  EXPECT_EQ(st.width.min, 24u);
  EXPECT_EQ(st.width.max, 28u);
  EXPECT_EQ(st.height.min, 16u);
  EXPECT_EQ(st.height.max, 17u);
  EXPECT_EQ(st.sample_bytes.max >= st.sample_bytes.p90 && st.sample_bytes.p90 >= st.sample_bytes.p50, true);
}

// Stat reads the shards' tables on several threads, each counted apart and added in shard order:
// every figure, the buckets' cropped shares included, is the same on one thread as on several, and
// the progress callback counts the shards in order.
TEST_F(VerifyTest, StatGivesTheSameFiguresOnAnyNumberOfThreads) {
  std::vector<Bucket> buckets;
  ASSERT_TRUE(ParseBuckets("24x16,16x24,20x20", "--buckets", &buckets).ok());
  const auto stat = [&](int threads, std::vector<uint64_t>* progress) {
    StatOptions options;
    options.threads = threads;
    options.buckets = buckets;
    options.on_shard = [progress](uint64_t done, uint64_t total) {
      progress->push_back(done);
      EXPECT_EQ(total, 3u);
    };
    DatasetStats st;
    EXPECT_TRUE(Stat(out(), options, &st).ok());
    return st;
  };
  std::vector<uint64_t> progress_one, progress_many;
  const DatasetStats one = stat(1, &progress_one), many = stat(8, &progress_many);
  EXPECT_EQ(progress_one, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(progress_many, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(many.samples, 10u);
  EXPECT_TRUE(one.sample_bytes == many.sample_bytes);
  EXPECT_TRUE(one.width == many.width);
  EXPECT_TRUE(one.height == many.height);
  EXPECT_TRUE(one.original_width == many.original_width);
  EXPECT_TRUE(one.original_height == many.original_height);
  for (auto h : {&DatasetStats::width_histogram, &DatasetStats::height_histogram, &DatasetStats::aspect_histogram,
                 &DatasetStats::sample_bytes_histogram}) {
    EXPECT_EQ((one.*h).first, (many.*h).first);
    EXPECT_EQ((one.*h).counts, (many.*h).counts);
  }
  EXPECT_EQ(one.image_formats, many.image_formats);
  ASSERT_EQ(many.classes.size(), 2u);
  EXPECT_EQ(many.classes[0].samples, 5u);
  EXPECT_EQ(many.classes[1].samples, 5u);
  ASSERT_EQ(many.buckets.size(), 3u);
  uint64_t bucketed = 0;
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(one.buckets[b].samples, many.buckets[b].samples) << b;
    EXPECT_EQ(one.buckets[b].cropped_share, many.buckets[b].cropped_share) << b;
    bucketed += many.buckets[b].samples;
  }
  EXPECT_EQ(bucketed + many.unsized, 10u);
}

}  // namespace
}  // namespace shardpack
