// What a remote dataset's manifest may name, and what counts as a remote location. Reading over
// HTTP itself is tested against a real nginx: tests/interop/http_dataset_test.py.
#include "ops/remote_dataset.h"

#include <gtest/gtest.h>

#include <cstdlib>

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

TEST(RemoteDataset, HttpHttpsAndS3UrlsAreRemote) {
  EXPECT_TRUE(IsRemoteLocation("http://host/ds"));
  EXPECT_TRUE(IsRemoteLocation("https://host/ds"));
  EXPECT_FALSE(IsRemoteLocation("/data/ds"));
  EXPECT_FALSE(IsRemoteLocation("ds/http://x"));
  EXPECT_TRUE(IsRemoteLocation("s3://bucket/ds"));
}

// s3:// URLs as the HTTP(S) URLs that serve them, from the AWS variables.
TEST(RemoteDataset, S3UrlsBecomeTheirEndpointsUrls) {
  for (const char* v : {"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "SHARDPACK_S3_PATH_STYLE"}) unsetenv(v);
  std::string url;
  ASSERT_TRUE(S3ToHttpUrl("s3://bucket/train/ds", &url).ok());
  EXPECT_EQ(url, "https://bucket.s3.us-east-1.amazonaws.com/train/ds");
  setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  ASSERT_TRUE(S3ToHttpUrl("s3://bucket/ds", &url).ok());
  EXPECT_EQ(url, "https://bucket.s3.eu-west-1.amazonaws.com/ds");
  setenv("AWS_REGION", "ap-south-1", 1);  // AWS_REGION first, as the AWS tools take it
  setenv("SHARDPACK_S3_PATH_STYLE", "1", 1);
  ASSERT_TRUE(S3ToHttpUrl("s3://bucket/ds", &url).ok());
  EXPECT_EQ(url, "https://s3.ap-south-1.amazonaws.com/bucket/ds");
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
  ASSERT_TRUE(S3ToHttpUrl("s3://bucket/a/b", &url).ok());
  EXPECT_EQ(url, "http://127.0.0.1:9000/bucket/a/b");
  ASSERT_TRUE(S3ToHttpUrl("https://host/x", &url).ok());
  EXPECT_EQ(url, "https://host/x");
  EXPECT_EQ(S3ToHttpUrl("s3:///x", &url).message(), "s3:///x: no bucket (s3://BUCKET/PREFIX)");
  for (const char* v : {"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "SHARDPACK_S3_PATH_STYLE"}) unsetenv(v);
}

}  // namespace
}  // namespace shardpack
