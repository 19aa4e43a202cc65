// Where a location is classified (storage/location.h) and where the environment's settings are
// read (tools/environment.h): the only two places that look at a location's text or at a variable.
#include "storage/location.h"

#include <gtest/gtest.h>

#include <map>

#include "shardpack/dataset_reader.h"
#include "storage/storage_backend.h"
#include "tools/environment.h"

namespace shardpack {
namespace {

Location Parsed(const std::string& text) {
  Location location;
  const Status s = ParseLocation(text, &location);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return location;
}

TEST(Location, EachKindIsToldOnce) {
  const Location folder = Parsed("/data/ds");
  EXPECT_TRUE(folder.local());
  EXPECT_FALSE(folder.shard_list);
  EXPECT_EQ(folder.backend, nullptr);

  const Location shards = Parsed("/data/train-{000000..000003}.tar");
  EXPECT_TRUE(shards.local());
  EXPECT_TRUE(shards.shard_list);

  const Location relative_with_scheme_inside = Parsed("ds/http://x");
  EXPECT_TRUE(relative_with_scheme_inside.local());

  const Location https = Parsed("https://host/ds");
  EXPECT_TRUE(https.remote());
  EXPECT_EQ(https.scheme, "https");
  EXPECT_EQ(https.backend, FindStorageBackend("https"));
  EXPECT_FALSE(https.shard_list);

  const Location remote_shards = Parsed("https://host/train-{0..3}.tar");
  EXPECT_TRUE(remote_shards.remote());
  EXPECT_TRUE(remote_shards.shard_list);

  const Location s3 = Parsed("S3://bucket/ds");  // schemes are case-insensitive (RFC 3986)
  EXPECT_EQ(s3.scheme, "s3");
  EXPECT_EQ(s3.backend, FindStorageBackend("s3"));

  const Location pipe = Parsed("pipe:cat /data/train-{0..3}.tar");
  EXPECT_TRUE(pipe.pipe());
  EXPECT_EQ(pipe.command, "cat /data/train-{0..3}.tar");
  EXPECT_TRUE(pipe.shard_list);

  const Location secret = Parsed("https://user:pass@host/ds");
  EXPECT_EQ(secret.shown, "https://host/ds");
  EXPECT_EQ(secret.text, "https://user:pass@host/ds");
}

TEST(Location, WhatNoBackendServesIsRefusedWhereItEnters) {
  Location location;
  EXPECT_EQ(ParseLocation("", &location).message(), "an empty location: give a folder, a shard list or a URL");
  EXPECT_EQ(ParseLocation("ftp://user:pw@host/ds", &location).message(),
            "ftp://host/ds: no storage backend reads ftp:// locations (known: http, https, s3; a local folder is "
            "given as a path)");
  const Status bucket = ParseLocation("s3://evil.example?x/ds", &location);
  EXPECT_EQ(bucket.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bucket.message(),
            "s3://evil.example?x/ds: 'evil.example?x' is not a valid S3 bucket name (only lower-case letters, "
            "digits, '.' and '-' are allowed; see AWS's bucket naming rules)");
  EXPECT_EQ(ParseLocation("s3:///ds", &location).message(), "s3:///ds: no bucket (s3://BUCKET/PREFIX)");
}

TEST(Location, UrlPathAndMentions) {
  EXPECT_EQ(UrlScheme("HTTPS://host/x"), "https");
  EXPECT_EQ(UrlScheme("/data/ds"), "");
  EXPECT_EQ(UrlPath("s3://bucket/a/b"), "bucket/a/b");
  EXPECT_EQ(UrlPath("/data/ds"), "");
  EXPECT_TRUE(MentionsUrl("a/http://b"));
  EXPECT_FALSE(MentionsUrl("shard-000000.tar"));
}

// A remote shard list streamed without a cache folder cannot hold a pipe: entry, whose output is
// saved whole: refused, naming it, before anything is fetched (port 9 answers nothing).
TEST(Location, AStreamedShardListRefusesAPipeEntry) {
  RemoteOptions remote;
  remote.sequential = true;
  std::unique_ptr<DatasetReader> reader;
  EXPECT_EQ(DatasetReader::Open("http://127.0.0.1:9/a.tar::pipe:cat b.tar", nullptr, &reader, remote).message(),
            "reading http://127.0.0.1:9/a.tar::pipe:cat b.tar needs a local cache folder for its pipe: entry "
            "(pipe:cat b.tar): set SHARDPACK_CACHE=DIR");
}

// The variables docs/remote.md lists, as the CLI and the Python module read them.
TEST(Environment, FillsWhatTheCallerLeftUnset) {
  std::map<std::string, std::string> vars = {
      {"SHARDPACK_CACHE", "/cache"},         {"SHARDPACK_CACHE_TEAM", "1"},
      {"SHARDPACK_HTTP_ATTEMPTS", "3"},      {"SHARDPACK_HTTP_TIMEOUT", "2.5"},
      {"SHARDPACK_HTTP_MAX_BACKOFF", "0.5"}, {"SHARDPACK_HTTP_RETRY_SECONDS", "7"},
      {"SHARDPACK_HTTP_MAX_BYTES", "1e9"},   {"AWS_ACCESS_KEY_ID", "id"},
      {"AWS_SECRET_ACCESS_KEY", "secret"},   {"AWS_SESSION_TOKEN", "token"},
      {"AWS_DEFAULT_REGION", "eu-west-1"},   {"AWS_ENDPOINT_URL", "http://127.0.0.1:9000"},
      {"SHARDPACK_S3_PATH_STYLE", "0"},      {"SHARDPACK_S3_PART_SIZE", "5242880"},
      {"SHARDPACK_S3_UPLOADS", "6"},         {"TMPDIR", "/scratch"},
      {"SHARDPACK_INDEX_MEMORY", "512MB"},
  };
  const GetEnv getenv = [&](const char* name) { return vars.count(name) ? vars[name].c_str() : nullptr; };
  RemoteOptions o;
  ASSERT_TRUE(ApplyEnvironment(&o, getenv).ok());
  EXPECT_EQ(o.cache_dir, "/cache");
  EXPECT_TRUE(o.cache_team);
  EXPECT_EQ(o.http.attempts, 3);
  EXPECT_EQ(o.http.timeout_seconds, 2.5);
  EXPECT_EQ(o.http.max_backoff_seconds, 0.5);
  EXPECT_EQ(o.http.retry_seconds, 7);
  EXPECT_EQ(o.http.max_bytes, 1000000000u);
  EXPECT_EQ(o.s3.access_key_id, "id");
  EXPECT_EQ(o.s3.secret_access_key, "secret");
  EXPECT_EQ(o.s3.session_token, "token");
  EXPECT_EQ(o.s3.region, "eu-west-1");
  EXPECT_EQ(o.s3.endpoint_url, "http://127.0.0.1:9000");
  EXPECT_FALSE(o.s3.path_style);
  EXPECT_EQ(o.s3.part_size, 5242880u);
  EXPECT_EQ(o.s3.uploads, 6);
  EXPECT_EQ(o.s3.staging_parent, "/scratch");  // $TMPDIR without $SHARDPACK_STAGING
  EXPECT_EQ(o.index_memory, 512000000u);
  EXPECT_EQ(TempParentFromEnvironment(getenv), "/scratch");

  vars["SHARDPACK_STAGING"] = "/staging";
  vars["AWS_REGION"] = "ap-south-1";
  RemoteOptions given;
  given.cache_dir = "/mine";  // a cache folder the caller gave wins over $SHARDPACK_CACHE
  ASSERT_TRUE(ApplyEnvironment(&given, getenv).ok());
  EXPECT_EQ(given.cache_dir, "/mine");
  EXPECT_EQ(given.s3.staging_parent, "/staging");
  EXPECT_EQ(given.s3.region, "ap-south-1");

  RemoteOptions none;
  ASSERT_TRUE(ApplyEnvironment(&none, [](const char*) -> const char* { return nullptr; }).ok());
  EXPECT_EQ(none.cache_dir, "");
  EXPECT_FALSE(none.cache_team);
  EXPECT_EQ(none.http.attempts, 0);
  EXPECT_EQ(none.s3.region, "");
  EXPECT_EQ(none.s3.staging_parent, "");
}

// A variable set to what its option cannot take was ignored, so a typo in a job script ran with the
// default unnoticed (SHARDPACK_INDEX_MEMORY=512M8 and the like): now an error naming it.
TEST(Environment, AValueItsOptionCannotTakeIsAnErrorNamingTheVariable) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"SHARDPACK_HTTP_MAX_BYTES", "not a number"},
      {"SHARDPACK_HTTP_TIMEOUT", "-2"},
      {"SHARDPACK_HTTP_ATTEMPTS", "inf"},
      {"SHARDPACK_S3_UPLOADS", "-1"},
      {"SHARDPACK_S3_PART_SIZE", "64MB"},
      {"SHARDPACK_INDEX_MEMORY", "lots"},
      {"SHARDPACK_INDEX_MEMORY", "0"},
      {"SHARDPACK_CACHE_TEAM", "yes"},
      {"SHARDPACK_S3_PATH_STYLE", "true"},
  };
  const std::map<std::string, std::string> takes = {
      {"SHARDPACK_HTTP_MAX_BYTES", "not a positive number"},
      {"SHARDPACK_HTTP_TIMEOUT", "not a positive number"},
      {"SHARDPACK_HTTP_ATTEMPTS", "not a positive number"},
      {"SHARDPACK_S3_UPLOADS", "not a whole number of at least 1"},
      {"SHARDPACK_S3_PART_SIZE", "not a whole number of at least 1"},
      {"SHARDPACK_INDEX_MEMORY", "not a size such as 512MB"},
      {"SHARDPACK_CACHE_TEAM", "takes 1 (on) or 0 (off)"},
      {"SHARDPACK_S3_PATH_STYLE", "takes 1 (on) or 0 (off)"},
  };
  for (const auto& [name, value] : cases) {
    const GetEnv getenv = [&, name = name, value = value](const char* n) {
      return n == name ? value.c_str() : nullptr;
    };
    RemoteOptions o;
    const Status s = ApplyEnvironment(&o, getenv);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << name;
    EXPECT_EQ(s.message(), name + "='" + value + "' in the environment: " + takes.at(name) + "; fix or unset it");
  }
  // Off and unset are the same for a switch; an empty size or path is unset.
  const std::map<std::string, std::string> quiet = {
      {"SHARDPACK_CACHE_TEAM", "0"}, {"SHARDPACK_S3_PATH_STYLE", ""}, {"SHARDPACK_INDEX_MEMORY", ""}};
  RemoteOptions o;
  ASSERT_TRUE(ApplyEnvironment(&o, [&](const char* n) { return quiet.count(n) ? quiet.at(n).c_str() : nullptr; }).ok());
  EXPECT_FALSE(o.cache_team);
  EXPECT_FALSE(o.s3.path_style);
  EXPECT_EQ(o.index_memory, 0u);
}

}  // namespace
}  // namespace shardpack
