// What a remote dataset's manifest may name, and what counts as a remote location. Reading over
// HTTP itself is tested against a real nginx: tests/interop/http_dataset_test.py.
#include "ops/remote_dataset.h"

#include <gtest/gtest.h>

namespace shardpack {
namespace {

TEST(RemoteDataset, ManifestNamesStayInsideTheDataset) {
  for (const char* ok : {"shard-000000.tar", "shard-000000.idx", "data.mdb", "part-000001.labels.npy", "sub/x.tar"}) {
    EXPECT_TRUE(CheckDatasetFileName(ok).ok()) << ok;
  }
  for (const char* bad : {"", "../secret", "a/../../b", "/etc/passwd", "http://elsewhere/x.tar", "a\\..\\b",
                          "x.tar?token=1", "x.tar#frag"}) {
    EXPECT_EQ(CheckDatasetFileName(bad).message(),
              std::string("the manifest lists '") + bad +
                  "', which is not a file inside the dataset folder: refused (a manifest must not send a reader "
                  "elsewhere)")
        << bad;
  }
}

TEST(RemoteDataset, OnlyHttpAndHttpsUrlsAreRemote) {
  EXPECT_TRUE(IsRemoteLocation("http://host/ds"));
  EXPECT_TRUE(IsRemoteLocation("https://host/ds"));
  EXPECT_FALSE(IsRemoteLocation("/data/ds"));
  EXPECT_FALSE(IsRemoteLocation("ds/http://x"));
  EXPECT_FALSE(IsRemoteLocation("s3://bucket/ds"));  // not yet: issue 14
}

}  // namespace
}  // namespace shardpack
