// What a remote dataset's manifest may name, and what counts as a remote location. Reading over
// HTTP itself is tested against a real nginx: tests/interop/http_dataset_test.py.
#include "storage/remote_dataset.h"

#include <gtest/gtest.h>

#include <map>

#include "storage/location.h"
#include "storage/storage_backend.h"
#include "tools/environment.h"

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
  const auto remote = [](const std::string& text) {
    Location location;
    EXPECT_TRUE(ParseLocation(text, &location).ok()) << text;
    return location.remote();
  };
  EXPECT_TRUE(remote("http://host/ds"));
  EXPECT_TRUE(remote("https://host/ds"));
  EXPECT_FALSE(remote("/data/ds"));
  EXPECT_FALSE(remote("ds/http://x"));
  EXPECT_TRUE(remote("s3://bucket/ds"));
}

// s3:// URLs as the HTTP(S) URLs that serve them, from the AWS variables (read where the CLI and
// Python read them, tools/environment.h).
TEST(RemoteDataset, S3UrlsBecomeTheirEndpointsUrls) {
  std::map<std::string, std::string> vars;
  const auto url_of = [&](const std::string& location, std::string* url) {
    RemoteOptions options;
    EXPECT_TRUE(ApplyEnvironment(&options, [&](const char* name) {
                  return vars.count(name) ? vars[name].c_str() : nullptr;
                }).ok());
    Location parsed;  // the URL a backend's client fetches for a location (StorageBackend::ClientUrl)
    SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
    return parsed.backend->ClientUrl(parsed.shown, options, url);
  };
  std::string url;
  ASSERT_TRUE(url_of("s3://bucket/train/ds", &url).ok());
  EXPECT_EQ(url, "https://bucket.s3.us-east-1.amazonaws.com/train/ds");
  vars["AWS_DEFAULT_REGION"] = "eu-west-1";
  ASSERT_TRUE(url_of("s3://bucket/ds", &url).ok());
  EXPECT_EQ(url, "https://bucket.s3.eu-west-1.amazonaws.com/ds");
  vars["AWS_REGION"] = "ap-south-1";  // AWS_REGION first, as the AWS tools take it
  vars["SHARDPACK_S3_PATH_STYLE"] = "1";
  ASSERT_TRUE(url_of("s3://bucket/ds", &url).ok());
  EXPECT_EQ(url, "https://s3.ap-south-1.amazonaws.com/bucket/ds");
  vars["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  ASSERT_TRUE(url_of("s3://bucket/a/b", &url).ok());
  EXPECT_EQ(url, "http://127.0.0.1:9000/bucket/a/b");
  ASSERT_TRUE(url_of("https://host/x", &url).ok());
  EXPECT_EQ(url, "https://host/x");
  EXPECT_EQ(url_of("s3:///x", &url).message(), "s3:///x: no bucket (s3://BUCKET/PREFIX)");
}

}  // namespace
}  // namespace shardpack
