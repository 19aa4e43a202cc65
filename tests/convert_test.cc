#include "shardpack/convert.h"

#include <gtest/gtest.h>

#include "formats/lmdb/lmdb_verifier.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

using testing::DatasetTest;
using testing::ReadFile;

class ConvertTest : public DatasetTest {};

TEST_F(ConvertTest, WdsToRawEqualsPackingRawDirectly) {
  MakeTree(2, 6);
  PackOptions o = QuietOptions();
  PackResult r;
  ASSERT_TRUE(PackTo(out("wds"), o, &r).ok());
  o.format = DatasetFormat::kRaw;
  o.crop_height = o.crop_width = 16;
  ASSERT_TRUE(Convert(out("wds"), out("converted") + "/ds", o, &r).ok());
  ASSERT_TRUE(PackTo(out("direct") + "/ds", o, &r).ok());
  for (const char* f : {"shard-000000.npy", "shard-000000.labels.npy", "shard-000000.keys.txt", "manifest.json"}) {
    EXPECT_EQ(ReadFile(out("converted") + "/ds/" + f), ReadFile(out("direct") + "/ds/" + f)) << f;
  }
}

TEST_F(ConvertTest, LmdbToWdsKeepsBytesLabelsKeysAndPaths) {
  std::vector<std::string> paths = MakeTree(2, 3);
  PackOptions o = QuietOptions();
  o.format = DatasetFormat::kLmdb;
  PackResult r;
  ASSERT_TRUE(PackTo(out("lmdb"), o, &r).ok());
  o.format = DatasetFormat::kWebDataset;
  ASSERT_TRUE(Convert(out("lmdb"), out("wds") + "/ds", o, &r).ok());
  PackResult direct;
  ASSERT_TRUE(PackTo(out("direct") + "/ds", o, &direct).ok());
  // Same samples, keys, labels and source paths: the shards are byte-identical.
  EXPECT_EQ(ReadFile(out("wds") + "/ds/shard-000000.tar"), ReadFile(out("direct") + "/ds/shard-000000.tar"));
  EXPECT_EQ(r.manifest.classes, direct.manifest.classes);
}

TEST_F(ConvertTest, RawDatasetsCannotBeConverted) {
  MakeTree(1, 2);
  PackOptions o = QuietOptions();
  o.format = DatasetFormat::kRaw;
  o.keep_size = true;
  PackResult r;
  ASSERT_TRUE(PackTo(out("raw"), o, &r).ok());
  Status s = Convert(out("raw"), out("x"), QuietOptions(), &r);
  EXPECT_EQ(s.message(), out("raw") +
                             " is a 'raw' dataset, which holds decoded pixels only; convert the wds or lmdb "
                             "dataset it was made from");
}

TEST_F(ConvertTest, FolderWithoutShardsSaysSo) {
  std::filesystem::create_directories(out("empty"));
  PackResult r;
  Status s = Convert(out("empty"), out("x"), QuietOptions(), &r);
  EXPECT_EQ(s.message(), out("empty") + " holds neither a manifest.json nor .tar/.tar.gz shards; nothing to convert");
}

}  // namespace
}  // namespace shardpack
