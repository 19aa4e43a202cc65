#include "shardpack/dataset_reader.h"

#include <gtest/gtest.h>

#include <thread>

#include "ground/sample_keys.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::ReadFile;

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
    o.format = GetParam().format;
    o.samples_per_shard = 4;  // several shards, so sample i must be located across them
    if (GetParam().crop) o.crop_height = o.crop_width = 12;
    o.keep_size = GetParam().keep_size;
    if (GetParam().zstd) {
      o.compress = "zstd";
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

INSTANTIATE_TEST_SUITE_P(Formats, ReadEveryFormat,
                         ::testing::Values(ReaderCase{"wds", "wds", false, false, false},
                                           ReaderCase{"lmdb", "lmdb", false, false, false},
                                           ReaderCase{"raw", "raw", true, false, false},
                                           ReaderCase{"raw_keep_size", "raw", false, true, false},
                                           ReaderCase{"raw_zstd", "raw", true, false, true}),
                         [](const ::testing::TestParamInfo<ReaderCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace shardpack
