// Shard lists: brace expansion as WebDataset users write it, and random access to tar shards that
// other tools wrote (GNU tar in its gnu, pax and ustar formats), indexed on open, or located through
// the DALI index shardpack writes beside its own shards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "formats/wds/wds_shard_index.h"
#include "shardpack/convert.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/shard_spec.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::DatasetTest;

std::vector<std::string> Expand(const std::string& spec) {
  std::vector<std::string> paths;
  const Status s = ExpandShardSpec(spec, &paths);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return paths;
}

std::string ExpandError(const std::string& spec, size_t max_paths = 10'000'000) {
  std::vector<std::string> paths;
  return ExpandShardSpec(spec, &paths, max_paths).ToString();
}

TEST(ShardSpec, ExpandsRangesAlternativesAndJoinedSpecs) {
  EXPECT_EQ(Expand("train-{000000..000003}.tar"),
            (std::vector<std::string>{"train-000000.tar", "train-000001.tar", "train-000002.tar", "train-000003.tar"}));
  EXPECT_EQ(Expand("{a,b}/p-{0..1}.tar"),
            (std::vector<std::string>{"a/p-0.tar", "a/p-1.tar", "b/p-0.tar", "b/p-1.tar"}));
  EXPECT_EQ(Expand("x.tar::y-{09..11}.tar"), (std::vector<std::string>{"x.tar", "y-09.tar", "y-10.tar", "y-11.tar"}));
  EXPECT_EQ(Expand("z-{3..1}.tar"), (std::vector<std::string>{"z-3.tar", "z-2.tar", "z-1.tar"}));
  EXPECT_EQ(Expand("plain.tar"), (std::vector<std::string>{"plain.tar"}));
}

TEST(ShardSpec, RefusesMalformedAndHugeSpecs) {
  EXPECT_EQ(ExpandError("a-{0..3.tar"), "invalid argument: shard list 'a-{0..3.tar': '{' without a matching '}'");
  EXPECT_EQ(ExpandError("a-}.tar"), "invalid argument: shard list 'a-}.tar': '}' without a matching '{'");
  EXPECT_EQ(ExpandError("a-{x..3}.tar"),
            "invalid argument: shard list 'a-{x..3}.tar': range {x..3} needs a number at each end");
  EXPECT_EQ(ExpandError("a-{0..99999999999}.tar"),
            "invalid argument: shard list 'a-{0..99999999999}.tar' expands to more than 10000000 paths");
  EXPECT_EQ(ExpandError("{0..9}-{0..9}", 50),
            "invalid argument: shard list '{0..9}-{0..9}' expands to more than 50 paths");
  EXPECT_EQ(ExpandError("::"), "invalid argument: shard list '::' names no shards");
  // Few paths but long ones (found by fuzz_shard_spec): bounded in bytes too.
  const std::string long_spec = std::string(8000, 'x') + "-{0..9999}.tar";
  EXPECT_EQ(ExpandError(long_spec),
            "invalid argument: shard list '" + long_spec + "' expands to more than 64 MiB of paths");
  EXPECT_TRUE(LooksLikeShardSpec("d/train-{0..3}.tar"));
  EXPECT_TRUE(LooksLikeShardSpec("one.tar"));
  EXPECT_FALSE(LooksLikeShardSpec("datasets/imagenet"));
}

class ThirdPartyShards : public DatasetTest {
 protected:
  struct Source {
    std::string bytes;
    int32_t label;
  };
  using Samples = std::map<std::string, Source>;

  // Writes samples first..first+count-1 under src/<root>/d: keys with folders, half of them long
  // enough to need a GNU long-name or PAX header, each with an image, a .cls and a .json field.
  Samples WriteSamples(const std::string& root, int first, int count) {
    Samples samples;
    const std::string long_dir = "d/" + std::string(120, 'x');
    for (int i = first; i < first + count; ++i) {
      const std::string key = (i % 2 ? long_dir : std::string("d/sub")) + "/sample" + std::to_string(i);
      const ImageFormat f = i % 3 == 2 ? ImageFormat::kPng : ImageFormat::kJpeg;
      Source s{testing::MakeImage(f, 20 + i, 16, uint64_t(i)), i % 2 ? 7 : 3 + i};
      const std::string base = src() + "/" + root + "/" + key;
      testing::WriteFile(base + (f == ImageFormat::kPng ? ".png" : ".jpg"), s.bytes);
      testing::WriteFile(base + ".cls", std::to_string(s.label) + "\n");
      testing::WriteFile(base + ".json", "{\"i\": " + std::to_string(i) + "}");
      samples[key] = s;
    }
    return samples;
  }

  // GNU tar, as people make shards by hand: members sorted by name, so each sample's are adjacent.
  std::string Tar(const std::string& format, const std::string& root, const std::string& name,
                  const std::string& extra_flags = "") {
    const std::string path = dir_.Sub(name);
    const std::string cmd = "tar --format=" + format + " --sort=name " + extra_flags + " -cf '" + path + "' -C '" +
                            src() + "/" + root + "' d";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  }

  void ExpectSamples(const DatasetReader& reader, const std::vector<std::string>& order, const Samples& expected) {
    ASSERT_EQ(reader.size(), order.size());
    ReadSample sample;
    for (uint64_t i = 0; i < reader.size(); ++i) {
      ASSERT_TRUE(reader.Read(i, &sample).ok());
      EXPECT_EQ(sample.key, order[i]);
      ASSERT_EQ(expected.count(sample.key), 1u) << sample.key;
      EXPECT_EQ(sample.encoded, expected.at(sample.key).bytes) << sample.key;
      EXPECT_EQ(sample.label, expected.at(sample.key).label) << sample.key;
      EXPECT_EQ(sample.format, SniffImageFormat(sample.encoded));
    }
  }

  static std::vector<std::string> Keys(const Samples& s) {  // in tar --sort=name order
    std::vector<std::string> keys;
    for (const auto& [key, source] : s) keys.push_back(key);
    return keys;
  }

  static std::string OpenError(const std::string& spec) {
    std::unique_ptr<DatasetReader> reader;
    return DatasetReader::Open(spec, nullptr, &reader).ToString();
  }
};

TEST_F(ThirdPartyShards, GnuAndPaxTarsAreIndexedOnOpen) {
  const Samples samples = WriteSamples("a", 0, 9);
  for (const std::string format : {"gnu", "pax"}) {
    SCOPED_TRACE(format);
    const std::string shard = Tar(format, "a", "shard-" + format + ".tar");
    ASSERT_FALSE(std::filesystem::exists(DaliIndexPathFor(shard)));
    std::unique_ptr<DatasetReader> reader;
    const Status s = DatasetReader::Open(shard, nullptr, &reader);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectSamples(*reader, Keys(samples), samples);
  }
}

TEST_F(ThirdPartyShards, ABraceRangeOpensItsShardsInOrder) {
  Samples all = WriteSamples("a", 0, 4);
  const Samples second = WriteSamples("b", 4, 5);
  std::vector<std::string> order = Keys(all);
  for (const std::string& k : Keys(second)) order.push_back(k);
  all.insert(second.begin(), second.end());
  Tar("gnu", "a", "part-0.tar");
  Tar("pax", "b", "part-1.tar");
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(dir_.Sub("part-{0..1}.tar"), nullptr, &reader).ok());
  ExpectSamples(*reader, order, all);
  ASSERT_EQ(reader->manifest().shards.size(), 2u);
  EXPECT_EQ(reader->manifest().shards.samples(0), 4u);
  EXPECT_EQ(reader->manifest().shards.samples(1), 5u);
}

TEST_F(ThirdPartyShards, ShardpackShardsAreLocatedThroughTheirDaliIndex) {
  MakeTree(3, 7);
  PackOptions o = QuietOptions();
  o.samples_per_shard = 8;
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  std::unique_ptr<DatasetReader> by_folder, by_shards;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &by_folder).ok());
  ASSERT_TRUE(std::filesystem::exists(out() + "/shard-000000.idx"));
  const Status s = DatasetReader::Open(out() + "/shard-{000000..000002}.tar", nullptr, &by_shards);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(by_shards->size(), 21u);
  ReadSample a, b;
  for (uint64_t i = 0; i < 21; ++i) {
    ASSERT_TRUE(by_folder->Read(i, &a).ok());
    ASSERT_TRUE(by_shards->Read(i, &b).ok());
    EXPECT_EQ(b.key, a.key);
    EXPECT_EQ(b.label, a.label);
    EXPECT_EQ(b.encoded, a.encoded);
  }
  // An index that points past the end of its shard is named, with the fix.
  testing::WriteFile(out() + "/shard-000000.idx", "v1.2 1\njpg 512 99999999 c0/img0.jpg\n");
  EXPECT_EQ(OpenError(out() + "/shard-000000.tar"),
            "data loss: " + out() + "/shard-000000.idx: member 'c0/img0.jpg' lies past the end of " + out() +
                "/shard-000000.tar (a stale index? delete it and it is rebuilt from the tar)");
}

TEST_F(ThirdPartyShards, BadShardsAreRefusedNamingShardAndMember) {
  WriteSamples("a", 0, 2);
  const std::string root = src() + "/a/d/sub/";
  // Members of sample0 split by sample2's: listed explicitly, out of order.
  testing::WriteFile(root + "sample2.jpg", testing::MakeImage(ImageFormat::kJpeg, 8, 8, 1));
  const std::string split = dir_.Sub("split.tar");
  ASSERT_EQ(std::system(("tar --format=gnu -cf '" + split + "' -C '" + src() +
                         "/a' d/sub/sample0.jpg d/sub/sample2.jpg d/sub/sample0.cls")
                            .c_str()),
            0);
  EXPECT_EQ(OpenError(split),
            "data loss: " + split +
                ": member 'd/sub/sample0.cls' belongs to sample 'd/sub/sample0', whose members are not "
                "adjacent; write shards with the members of a sample together (tar --sort=name, "
                "webdataset's TarWriter)");
  // A compressed shard opens (decompressed first: tests/interop/webdataset_library_test.py reads
  // one's samples against webdataset's), and a damaged one is refused naming it.
  const std::string gz = Tar("gnu", "a", "zipped.tar.gz", "-z");
  EXPECT_EQ(OpenError(gz + "::"), "OK");
  std::string zipped;
  ASSERT_TRUE(Env::Default()->ReadFile(gz, 1 << 20, &zipped).ok());
  testing::WriteFile(dir_.Sub("cut.tar.gz"), zipped.substr(0, zipped.size() / 2));
  EXPECT_EQ(OpenError(dir_.Sub("cut.tar.gz") + "::"),
            "data loss: " + dir_.Sub("cut.tar.gz") + ": cannot decompress: truncated gzip input");
  // Absolute and ".." member names, which an extracting reader would write outside its folder.
  const std::string dotdot = dir_.Sub("dotdot.tar"), absolute = dir_.Sub("absolute.tar");
  ASSERT_EQ(std::system(
                ("tar --format=gnu -cf '" + dotdot + "' -C '" + src() + "/a' --transform='s,^,../,' d/sub/sample0.jpg")
                    .c_str()),
            0);
  ASSERT_EQ(std::system(("tar --format=gnu -P -cf '" + absolute + "' '" + root + "sample0.jpg' 2>/dev/null").c_str()),
            0);
  EXPECT_EQ(OpenError(dotdot),
            "data loss: " + dotdot + ": member '../d/sub/sample0.jpg' has an absolute or '..' path; refusing it");
  EXPECT_EQ(OpenError(absolute),
            "data loss: " + absolute + ": member '" + root + "sample0.jpg' has an absolute or '..' path; refusing it");
  PackOptions o = QuietOptions();
  PackResult r;
  EXPECT_EQ(Convert(dotdot, out("converted"), o, &r).ToString(),
            "data loss: " + dotdot + ": member '../d/sub/sample0.jpg' has an absolute or '..' path; refusing it");
  std::filesystem::create_symlink("sample0.jpg", root + "sample9.jpg");
  const std::string linked = Tar("gnu", "a", "linked.tar");
  EXPECT_EQ(OpenError(linked),
            "data loss: " + linked + ": member 'd/sub/sample9.jpg' is a link or special file; refusing it");
  std::filesystem::remove(root + "sample9.jpg");
  testing::WriteFile(root + "sample8.txt", "no image here");
  const std::string imageless = Tar("gnu", "a", "imageless.tar");
  EXPECT_EQ(OpenError(imageless),
            "data loss: " + imageless + ": sample 'd/sub/sample8' has no image member (jpg, jpeg, png, webp, bmp)");
}

}  // namespace
}  // namespace shardpack
