#include "formats/lmdb/lmdb_dataset_writer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "formats/lmdb/lmdb_format.h"
#include "formats/lmdb/lmdb_verifier.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::DatasetTest;
using testing::ReadFile;
using testing::WriteFile;

TEST(LmdbRecord, RoundTripsHeaderAndImage) {
  std::string record = EncodeLmdbRecord({{"label", 3}}, std::string("\xff\xd8\xff\x00img", 7));
  EXPECT_EQ(record.substr(0, 8), std::string("SPR1\x0b\0\0\0", 8));  // {"label":3} is 11 bytes
  nlohmann::json header;
  std::string_view image;
  ASSERT_TRUE(ParseLmdbRecord(record, &header, &image).ok());
  EXPECT_EQ(header["label"], 3);
  EXPECT_EQ(image, std::string("\xff\xd8\xff\x00img", 7));
}

TEST(LmdbRecord, RejectsDamagedRecords) {
  nlohmann::json header;
  std::string_view image;
  EXPECT_EQ(ParseLmdbRecord("XPR1\0\0\0\0", &header, &image).message(),
            "record does not start with the SPR1 or SPR2 magic");
  EXPECT_EQ(ParseLmdbRecord(std::string("SPR1\xff\0\0\0{}", 10), &header, &image).message(),
            "record header length runs past the record");
  EXPECT_EQ(ParseLmdbRecord(std::string("SPR1\x02\0\0\0[]", 10), &header, &image).message(),
            "record header is not a JSON object");
  // Fields the readers take must have their type, and numbers must fit (a cast of 1e30 to int32 is
  // undefined behaviour).
  const std::pair<nlohmann::json, std::string> bad[] = {
      {{{"label", 1e30}}, "record header field \"label\" is 1e+30, not an integer from -1 to 2147483647"},
      {{{"label", -2}}, "record header field \"label\" is -2, not an integer from -1 to 2147483647"},
      {{{"label", "cat"}}, "record header field \"label\" is \"cat\", not an integer from -1 to 2147483647"},
      {{{"width", 4294967296ull}}, "record header field \"width\" is 4294967296, not an integer from 0 to 4294967295"},
      {{{"key", 7}}, "record header field \"key\" is 7, not a string"},
  };
  for (const auto& [h, message] : bad) {
    const std::string record = EncodeLmdbRecord(h, "img");
    EXPECT_EQ(ParseLmdbRecord(record, &header, &image).message(), message);
  }
  const std::string good = EncodeLmdbRecord({{"label", -1}, {"width", 4294967295u}, {"key", "a"}}, "img");
  EXPECT_TRUE(ParseLmdbRecord(good, &header, &image).ok());
}

// A record with fields (SPR2): the image, then each field, sizes and checksums in the header;
// byte offsets computed here by hand.
TEST(LmdbRecord, FieldsFollowTheImageInAnSpr2Record) {
  const std::vector<SampleField> fields = {{"json", "{}"}, {"txt", "a dog"}};
  nlohmann::json h = {{"label", 1}};
  AddLmdbFieldsHeader("img", fields, &h);
  const std::string record = EncodeLmdbRecord(h, "img", &fields);
  const std::string json = h.dump();
  EXPECT_EQ(record.substr(0, 4), "SPR2");
  EXPECT_EQ(record.size(), 8 + json.size() + 3 + 2 + 5);
  EXPECT_EQ(record.substr(8 + json.size()), "img{}a dog");
  EXPECT_EQ(h["fields"][1]["xxh64"], ChecksumHex(Xxh64("a dog")));
  nlohmann::json header;
  std::string_view image;
  std::vector<LmdbField> parsed;
  ASSERT_TRUE(ParseLmdbRecord(record, &header, &image, &parsed).ok());
  EXPECT_EQ(image, "img");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].name, "json");
  EXPECT_EQ(parsed[0].data, "{}");
  EXPECT_EQ(parsed[1].data, "a dog");
  // Sizes that do not add up to the record are refused, never read past it.
  EXPECT_EQ(ParseLmdbRecord(record + "x", &header, &image, &parsed).message(),
            "SPR2 record sizes do not add up to the record");
  h["fields"][1]["size"] = 500;
  EXPECT_EQ(ParseLmdbRecord(EncodeLmdbRecord(h, "img", &fields), &header, &image, &parsed).message(),
            "SPR2 record field entry {\"name\":\"txt\",\"size\":500,\"xxh64\":\"" + ChecksumHex(Xxh64("a dog")) +
                "\"} is not {name, size, xxh64} within the record");
}

class LmdbPackTest : public DatasetTest {
 protected:
  PackOptions LmdbOptions() {
    PackOptions o = QuietOptions();
    o.format = DatasetFormat::kLmdb;
    return o;
  }
};

TEST_F(LmdbPackTest, RecordsHoldTheSourceBytesLabelsAndMetadata) {
  std::vector<std::string> paths = MakeTree(3, 4);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), LmdbOptions(), &r).ok());
  ASSERT_EQ(r.manifest.shards.size(), 1u);
  EXPECT_EQ(r.manifest.shards[0].file, "data.mdb");
  EXPECT_EQ(r.manifest.samples, 12u);
  std::vector<SampleRecord> records;
  ASSERT_TRUE(ReadLmdbSampleRecords(out(), &records).ok());
  ASSERT_EQ(records.size(), paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(records[i].key, IndexKey(i));
    EXPECT_EQ(records[i].label, paths[i][1] - '0');
    EXPECT_EQ(records[i].xxh64, Xxh64(ReadFile(src() + "/" + paths[i])));
  }
  VerifyReport report;
  VerifyOptions decode;
  decode.decode = true;
  ASSERT_TRUE(Verify(out(), decode, &report).ok());
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.samples, 12u);
  EXPECT_EQ(report.images_decoded, 12u);
  DatasetStats st;
  ASSERT_TRUE(Stat(out(), {}, &st).ok());
  EXPECT_EQ(st.format, DatasetFormat::kLmdb);
  EXPECT_EQ(st.classes[2].samples, 4u);
  EXPECT_EQ(st.image_formats["jpeg"], 12u);
}

// Records of 16 KiB or more go into the file with pwrite, smaller ones through the map: every
// record must read back byte for byte, in its place, across map growth and several batches.
TEST_F(LmdbPackTest, MapGrowsWhenItFillsAndRecordsReadBackExactly) {
  const std::string large = testing::MakeImage(ImageFormat::kPng, 200, 200, 1);  // ~100 KB of noise
  ASSERT_GT(large.size(), 64u * 1024);
  std::filesystem::create_directories(out());
  LmdbDatasetWriter w(Env::Default(), out(), false, 256 * 1024);
  std::vector<std::string> images;
  const size_t count = LmdbDatasetWriter::kBatchSamples + 30;  // two batches
  for (size_t i = 0; i < count; ++i) {
    // Mostly large records, with small ones and one just under the pwrite threshold among them.
    std::string image = i % 7 == 3 ? large.substr(0, 3000) : i == 5 ? large.substr(0, 16 * 1024 - 9) : large;
    image[image.size() / 2] = static_cast<char>(i);
    image[image.size() - 1] = static_cast<char>(i >> 8);
    images.push_back(image);
    Sample s;
    s.key = "k";
    s.bytes = images.back();
    s.image.format = ImageFormat::kPng;
    ASSERT_TRUE(w.Add(s).ok()) << i;
  }
  std::vector<ShardEntry> shards;
  ASSERT_TRUE(w.Finish(nlohmann::json{{"samples", count}}, &shards).ok());
  EXPECT_GE(w.map_size(), count * large.size() * 6 / 7);
  std::unique_ptr<LmdbEnvironment> env;
  ASSERT_TRUE(LmdbEnvironment::Open(out(), /*read_only=*/true, 0, &env).ok());
  size_t checked = 0;
  ASSERT_TRUE(env->Read([&](MDB_txn* txn, MDB_dbi dbi) {
                   for (size_t i = 0; i < count; ++i) {
                     const std::string key = IndexKey(i);
                     MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
                     if (mdb_get(txn, dbi, &k, &v) != 0) return Status::NotFound(key);
                     nlohmann::json header;
                     std::string_view image;
                     SHARDPACK_RETURN_IF_ERROR(ParseLmdbRecord(
                         std::string_view(static_cast<const char*>(v.mv_data), v.mv_size), &header, &image));
                     EXPECT_EQ(image, images[i]) << i;
                     EXPECT_EQ(header["xxh64"], ChecksumHex(Xxh64(images[i]))) << i;
                     ++checked;
                   }
                   return Status::OK();
                 })
                  .ok());
  EXPECT_EQ(checked, count);
}

// Batches commit on a thread of their own: a failed commit must still stop the writer, with the
// reason, at the next Add() or at Finish().
TEST_F(LmdbPackTest, AFailedBatchCommitIsReportedAndSticks) {
  const std::string missing = out() + "/no-such-folder";
  LmdbDatasetWriter w(Env::Default(), missing, false, 1 << 20);
  Sample s;
  s.key = "k";
  s.bytes = "tiny";
  const std::string expected = "cannot open LMDB environment in " + missing + ": No such file or directory";
  Status first_error;
  size_t added = 0;
  for (; added < 3 * LmdbDatasetWriter::kBatchSamples && first_error.ok(); ++added) first_error = w.Add(s);
  // The first batch fails in the background; the Add that hands over the second batch reports it.
  EXPECT_EQ(added, 2 * LmdbDatasetWriter::kBatchSamples);
  EXPECT_EQ(first_error.message(), expected);
  std::vector<ShardEntry> shards;
  EXPECT_EQ(w.Finish(nlohmann::json{{"samples", added}}, &shards).message(), expected);
  EXPECT_EQ(w.status().message(), expected);
  EXPECT_EQ(w.Add(s).message(), expected);
  EXPECT_TRUE(shards.empty());
  EXPECT_FALSE(std::filesystem::exists(missing));
}

// A pack that fails part-way leaves no environment behind: an LMDB pack cannot resume, and a
// map-sized data.mdb would only take space. The failure here: files may not grow past 8 MiB in this
// process (RLIMIT_FSIZE), so the map cannot grow to hold the batch.
TEST_F(LmdbPackTest, AnAbandonedEnvironmentIsRemoved) {
  std::filesystem::create_directories(out());
  const std::string image = testing::MakeImage(ImageFormat::kPng, 200, 200, 1);  // ~100 KB of noise
  LmdbDatasetWriter w(Env::Default(), out(), false, 1 << 20);
  for (int i = 0; i < 100; ++i) {
    Sample s;
    s.key = "k";
    s.bytes = image;
    ASSERT_TRUE(w.Add(s).ok()) << i;  // 10 MB: one batch, committed by Finish
  }
  rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const rlimit limit{8 << 20, old.rlim_max};
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of death
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::vector<ShardEntry> shards;
  const Status s = w.Finish(nlohmann::json{{"samples", 100}}, &shards);
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(s.message(), "cannot grow the LMDB map of " + out() + " to 33554432 bytes: File too large");
  EXPECT_TRUE(std::filesystem::exists(out() + "/data.mdb"));
  w.Abandon();
  EXPECT_FALSE(std::filesystem::exists(out() + "/data.mdb"));
  EXPECT_FALSE(std::filesystem::exists(out() + "/lock.mdb"));
  EXPECT_TRUE(std::filesystem::is_empty(out()));
}

// Regression: a write transaction begun in one Add() and committed in another deadlocked once the
// pipeline ran Add() on a different thread (LMDB ties write transactions to their thread).
TEST_F(LmdbPackTest, ManyBatchesFromSeveralThreadsDoNotDeadlock) {
  MakeTree(2, 1100 / 2);
  PackOptions o = LmdbOptions();
  o.threads = 2;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  EXPECT_EQ(r.manifest.samples, 1100u);
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.samples, 1100u);
}

TEST_F(LmdbPackTest, VerifyReportsDamageWithoutOpeningTheDamagedFile) {
  MakeTree(2, 3);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), LmdbOptions(), &r).ok());
  const std::string path = out() + "/data.mdb";
  std::string bytes = ReadFile(path);
  bytes[bytes.size() / 2] ^= 0x20;
  WriteFile(path, bytes);
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  ASSERT_EQ(report.problems.size(), 2u);
  EXPECT_EQ(report.problems[0].what.rfind("checksum mismatch: xxh64 ", 0), 0u);
  EXPECT_EQ(report.problems[1].what, "records not read: LMDB cannot safely open a damaged environment");
}

TEST_F(LmdbPackTest, OutputIsByteIdenticalWhateverTheThreadCount) {
  MakeTree(3, 10);
  PackResult a, b;
  PackOptions o = LmdbOptions();
  o.threads = 1;
  ASSERT_TRUE(PackTo(out("a") + "/ds", o, &a).ok());
  o.threads = 2;
  ASSERT_TRUE(PackTo(out("b") + "/ds", o, &b).ok());
  EXPECT_EQ(ReadFile(out("a") + "/ds/data.mdb"), ReadFile(out("b") + "/ds/data.mdb"));
  EXPECT_EQ(ReadFile(out("a") + "/ds/manifest.json"), ReadFile(out("b") + "/ds/manifest.json"));
}

}  // namespace
}  // namespace shardpack
