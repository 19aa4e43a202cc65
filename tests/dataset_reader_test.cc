#include "shardpack/dataset_reader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/forge_manifest.h"

namespace shardpack {
namespace {

using testing::ForgeManifest;
using testing::ReadFile;
using testing::WriteFile;

struct ReaderCase {
  const char* name;
  const char* format;
  bool crop;
  bool keep_size;
  bool zstd;
};

class ReadEveryFormat : public testing::DatasetTest, public ::testing::WithParamInterface<ReaderCase> {
 protected:
  PackOptions Options() {
    PackOptions o = QuietOptions();
    o.format = testing::FormatNamed(GetParam().format);
    o.samples_per_shard = 4;  // several shards, so sample i must be located across them
    if (GetParam().crop) o.crop_height = o.crop_width = 12;
    o.keep_size = GetParam().keep_size;
    if (GetParam().zstd) {
      o.compress = RawCompression::kZstd;
      o.chunk_samples = 3;
    }
    return o;
  }
};

TEST_P(ReadEveryFormat, SampleIMatchesItsSource) {
  const std::vector<std::string> paths = MakeTree(2, 5);
  const PackOptions o = Options();
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
  ASSERT_EQ(reader->size(), paths.size());
  TransformOptions t;
  t.crop_height = o.crop_height;
  t.crop_width = o.crop_width;
  t.resize_shorter = std::max(o.crop_height, o.crop_width);
  ReadSample s;
  for (size_t i = 0; i < paths.size(); ++i) {
    ASSERT_TRUE(reader->Read(i, &s).ok()) << i;
    EXPECT_EQ(s.key, IndexKey(i));
    EXPECT_EQ(s.label, paths[i][1] - '0');
    const std::string source = ReadFile(src() + "/" + paths[i]);
    if (std::string(GetParam().format) == "raw") {
      DecodedImage expected;
      ASSERT_TRUE(DecodeAndTransform(source, t, &expected).ok());
      EXPECT_EQ(s.pixels.width, expected.width);
      EXPECT_EQ(s.pixels.height, expected.height);
      EXPECT_EQ(s.pixels.rgb, expected.rgb) << i;
    } else {
      EXPECT_EQ(s.encoded, source) << i;
    }
  }
  Status past = reader->Read(paths.size(), &s);
  EXPECT_EQ(past.message(), "sample 10 is past the end of the dataset (10 samples)");
}

TEST_P(ReadEveryFormat, ConcurrentReadsAgreeWithSequentialOnes) {
  MakeTree(2, 6);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), Options(), &r).ok());
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
  std::vector<ReadSample> sequential(reader->size()), parallel(reader->size());
  for (size_t i = 0; i < sequential.size(); ++i) ASSERT_TRUE(reader->Read(i, &sequential[i]).ok());
  // Plain threads (visible to ThreadSanitizer), each reading every fourth sample, backwards.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < parallel.size(); i += 4) {
        const size_t j = parallel.size() - 1 - i;
        if (!reader->Read(j, &parallel[j]).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (size_t i = 0; i < sequential.size(); ++i) {
    EXPECT_EQ(parallel[i].key, sequential[i].key);
    EXPECT_EQ(parallel[i].encoded, sequential[i].encoded);
    EXPECT_EQ(parallel[i].pixels.rgb, sequential[i].pixels.rgb);
  }
}

// Debian's default limit on open files is 1,024, and a reader keeps open each shard it reads (and
// up to 2,048 of them): under a low limit, a dataset of more shards than the limit allows must still
// read, every sample, in any order, again and again (files past a share of the limit are opened for
// each read instead of kept open, as leveldb's Env does). Here the limit leaves 24 files free.
TEST_P(ReadEveryFormat, MoreShardsThanTheOpenFileLimitAllowsStillRead) {
  if (std::string(GetParam().format) == "lmdb") GTEST_SKIP() << "an LMDB environment is one file";
  MakeTree(2, 30);
  PackOptions o = Options();
  o.samples_per_shard = 1;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  ASSERT_EQ(r.manifest.shards.size(), 60u);
  std::vector<std::string> expected(60);
  {
    std::unique_ptr<DatasetReader> reader;
    ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
    ReadSample s;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_TRUE(reader->Read(i, &s).ok()) << i;
      expected[i] = s.encoded.empty() ? std::string(s.pixels.rgb.begin(), s.pixels.rgb.end()) : s.encoded;
    }
  }
  size_t open_now = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++open_now;
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = open_now + 24;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::unique_ptr<DatasetReader> reader;
  Status opened = DatasetReader::Open(out(), nullptr, &reader);
  size_t failures = 0;
  std::string first_failure;
  ReadSample s;
  for (int pass = 0; pass < 2 && opened.ok(); ++pass) {
    for (size_t k = 0; k < expected.size(); ++k) {
      const size_t i = pass == 0 ? k : (k * 7) % expected.size();  // in order, then scattered
      const Status read = reader->Read(i, &s);
      const std::string got = s.encoded.empty() ? std::string(s.pixels.rgb.begin(), s.pixels.rgb.end()) : s.encoded;
      if (!read.ok() || got != expected[i]) {
        if (failures++ == 0) first_failure = std::to_string(i) + ": " + read.ToString();
      }
    }
  }
  reader.reset();
  setrlimit(RLIMIT_NOFILE, &old);
  EXPECT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_EQ(failures, 0u) << "first: " << first_failure;
}

// The side files a reader takes offsets from: sample tables, DALI indexes, zstd chunk indexes.
TEST_P(ReadEveryFormat, ASideFileChangedAfterPackIsRefusedNamingIt) {
  MakeTree(2, 5);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), Options(), &r).ok());
  // Each file the reader reads, with the first sample of its shard: the file is read (and checked)
  // when a sample of its shard is first asked for, not when the dataset opens.
  std::vector<std::string> read_by_reader;
  std::vector<uint64_t> first_sample;
  uint64_t first = 0;
  for (const ShardEntry& shard : r.manifest.shards) {
    if (!shard.sample_table.file.empty()) read_by_reader.push_back(shard.sample_table.file);
    if (!shard.index.file.empty()) read_by_reader.push_back(shard.index.file);
    for (const SideFile& f : shard.side_files) {
      if (f.file.find(".chunks.npy") != std::string::npos) read_by_reader.push_back(f.file);
    }
    first_sample.resize(read_by_reader.size(), first);
    first += shard.samples;
  }
  const size_t per_shard = std::string(GetParam().format) == "lmdb"  ? 0
                           : std::string(GetParam().format) == "wds" ? 2
                           : GetParam().zstd                         ? 2
                                                                     : 1;
  ASSERT_EQ(read_by_reader.size(), per_shard * r.manifest.shards.size());
  for (size_t k = 0; k < read_by_reader.size(); ++k) {
    const std::string& file = read_by_reader[k];
    const std::string path = out() + "/" + file;
    const std::string good = ReadFile(path);
    std::string bad = good;
    bad[bad.size() / 2] ^= 0x01;  // one bit, where a parser may well accept it
    WriteFile(path, bad);
    std::unique_ptr<DatasetReader> reader;
    ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok()) << "opens from the manifest alone";
    ReadSample sample;
    const Status s = reader->Read(first_sample[k], &sample);
    EXPECT_EQ(s.code(), Status::Code::kDataLoss) << file;
    EXPECT_EQ(
        s.message(),
        path + " does not match the checksum the manifest lists (the file changed after pack; run shardpack verify)");
    WriteFile(path, good);
  }
  std::unique_ptr<DatasetReader> reader;
  EXPECT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
}

TEST_P(ReadEveryFormat, AManifestChangedAfterPackIsRefused) {
  MakeTree(2, 5);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), Options(), &r).ok());
  const std::string path = out() + "/manifest.json";
  nlohmann::json j = nlohmann::json::parse(ReadFile(path));
  j["classes"][0] = "c1";  // labels would map to the wrong names
  WriteFile(path, j.dump(2) + "\n");
  std::unique_ptr<DatasetReader> reader;
  const Status s = DatasetReader::Open(out(), nullptr, &reader);
  EXPECT_EQ(s.message(), path + " was changed after pack wrote it (its manifest_xxh64 does not match its contents)");
}

TEST_P(ReadEveryFormat, AShardOfAnotherSizeThanTheManifestSaysIsRefused) {
  if (std::string(GetParam().format) == "lmdb") GTEST_SKIP() << "LMDB checks its own file (lmdb_dataset_writer_test)";
  MakeTree(2, 5);
  PackResult r;
  ASSERT_TRUE(PackTo(out(), Options(), &r).ok());
  const ShardEntry& shard = r.manifest.shards[1];
  const std::string path = out() + "/" + shard.file;
  std::filesystem::resize_file(path, shard.bytes - 100);
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok()) << "opens from the manifest alone";
  ReadSample sample;
  EXPECT_TRUE(reader->Read(0, &sample).ok()) << "shard 0 is whole";
  const Status s = reader->Read(r.manifest.shards[0].samples, &sample);  // the first of shard 1
  EXPECT_EQ(s.message(), path + " is " + std::to_string(shard.bytes - 100) + " bytes, the manifest says " +
                             std::to_string(shard.bytes) + " (run shardpack verify)");
}

// A raw sample table forged together with the manifest's checksums: the reader still refuses any
// layout but the one pack writes (a 1 TiB sample used to abort with std::bad_alloc, an offset
// moved inside the file to return the wrong pixels).
TEST(RawReaderBounds, ForgedSampleTablesAreRefusedNotTrusted) {
  testing::TempDir dir;
  const std::string src = dir.Sub("src"), ds = dir.Sub("ds");
  WriteFile(src + "/a/0.jpg", testing::MakeImage(ImageFormat::kJpeg, 40, 30, 1));
  WriteFile(src + "/a/1.jpg", testing::MakeImage(ImageFormat::kJpeg, 40, 30, 2));
  PackOptions o;
  o.format = DatasetFormat::kRaw;
  o.crop_height = o.crop_width = 8;
  o.sync = false;
  PackResult r;
  ASSERT_TRUE(Pack(src, ds, o, &r).ok());
  const std::string table_file = r.manifest.shards[0].sample_table.file;
  const std::string table_path = ds + "/" + table_file;
  const std::string good = ReadFile(table_path);
  // The second line (sample 000000001): key, offset, size, ... The pixels are 8x8x3 = 192 bytes
  // after the 128-byte .npy header, so sample 1 lies at 128 + 192 = 320.
  const size_t line = good.find("\n000000001\t") + 1;
  ASSERT_EQ(good.substr(line, 18), "000000001\t320\t192\t");
  const auto forge = [&](const std::string& offset_and_size) {
    std::string bad = good;
    bad.replace(line + 10, 7, offset_and_size);
    WriteFile(table_path, bad);
    ForgeManifest(ds,
                  [&](nlohmann::json* j) { (*j)["shardlist"][0]["sample_table"]["xxh64"] = ChecksumHex(Xxh64(bad)); });
    std::unique_ptr<DatasetReader> reader;
    SHARDPACK_RETURN_IF_ERROR(DatasetReader::Open(ds, nullptr, &reader));
    ReadSample sample;
    return reader->Read(0, &sample);  // the shard's table is read when a sample of it is
  };
  EXPECT_EQ(forge("320\t1099511627776").message(),
            table_path +
                ": sample 000000001 (8x8) claims 1099511627776 bytes at offset 320, not 192 at 320 (run "
                "shardpack verify)");
  EXPECT_EQ(forge("323\t192").message(),
            table_path +
                ": sample 000000001 (8x8) claims 192 bytes at offset 323, not 192 at 320 (run shardpack "
                "verify)");
  // The same forger, honest this time: the reader opens it (the forging itself is sound).
  EXPECT_TRUE(forge("320\t192").ok());
}

// A WebDataset folder's reader reads a sample's line of the sample table and of the DALI index when
// the sample is asked for (LineFile): a forged line, its checksum made to match, is refused when its
// sample is read, naming the file and line or the shard and sample; the samples around it still read.
TEST(WdsReaderBounds, ForgedLinesAreRefusedWhenTheirSampleIsRead) {
  testing::TempDir dir;
  const std::string src = dir.Sub("src"), ds = dir.Sub("ds");
  for (int i = 0; i < 3; ++i)
    WriteFile(src + "/a/" + std::to_string(i) + ".jpg", testing::MakeImage(ImageFormat::kJpeg, 40, 30, i));
  PackOptions o;
  o.format = DatasetFormat::kWebDataset;
  o.sync = false;
  PackResult r;
  ASSERT_TRUE(Pack(src, ds, o, &r).ok());
  const ShardEntry& shard = r.manifest.shards[0];
  const std::string index_path = ds + "/" + shard.index.file, table_path = ds + "/" + shard.sample_table.file;
  const std::string good_index = ReadFile(index_path), good_table = ReadFile(table_path);
  // Sample 1's image member: "jpg <offset> <size> 000000001.jpg" on the index's third line.
  const size_t line = good_index.find("\n", good_index.find("\n") + 1) + 1;
  const size_t jpg = good_index.find("jpg ", line) + 4;
  const size_t size_at = good_index.find(' ', jpg) + 1;
  const std::string image_size = good_index.substr(size_at, good_index.find(' ', size_at) - size_at);
  const auto read_with = [&](const std::string& index, const std::string& table, uint64_t sample) {
    WriteFile(index_path, index);
    WriteFile(table_path, table);
    ForgeManifest(ds, [&](nlohmann::json* j) {
      (*j)["shardlist"][0]["index"]["xxh64"] = ChecksumHex(Xxh64(index));
      (*j)["shardlist"][0]["sample_table"]["xxh64"] = ChecksumHex(Xxh64(table));
    });
    std::unique_ptr<DatasetReader> reader;
    SHARDPACK_RETURN_IF_ERROR(DatasetReader::Open(ds, nullptr, &reader));
    ReadSample s;
    return reader->Read(sample, &s);
  };
  std::string far = good_index;
  far.replace(jpg, size_at - 1 - jpg, "99999999");
  EXPECT_EQ(read_with(far, good_table, 1).message(), shard.file + ": sample 000000001 claims " + image_size +
                                                         " bytes at offset 99999999, past the end of the shard (" +
                                                         std::to_string(shard.bytes) + " bytes; run shardpack verify)");
  EXPECT_TRUE(read_with(far, good_table, 0).ok());
  EXPECT_TRUE(read_with(far, good_table, 2).ok());
  std::string cut = good_index;
  cut.replace(jpg, size_at - jpg, "");  // "jpg <size> name": a member entry without its offset
  EXPECT_EQ(read_with(cut, good_table, 1).message(),
            index_path + ": DALI index line 3: incomplete member entry (run shardpack verify)");
  std::string bad_table = good_table;
  const size_t row = bad_table.find("\n000000001\t") + 11;
  bad_table.replace(row, 1, "z");  // the offset no longer a number
  EXPECT_EQ(read_with(good_index, bad_table, 1).message(),
            table_path + ": sample table line 3 is malformed (run shardpack verify)");
  EXPECT_TRUE(read_with(good_index, bad_table, 2).ok());
  EXPECT_TRUE(read_with(good_index, good_table, 1).ok()) << "the forging itself is sound";
}

INSTANTIATE_TEST_SUITE_P(Formats, ReadEveryFormat,
                         ::testing::Values(ReaderCase{"wds", "wds", false, false, false},
                                           ReaderCase{"lmdb", "lmdb", false, false, false},
                                           ReaderCase{"raw", "raw", true, false, false},
                                           ReaderCase{"raw_keep_size", "raw", false, true, false},
                                           ReaderCase{"raw_zstd", "raw", true, false, true}),
                         [](const ::testing::TestParamInfo<ReaderCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace shardpack
