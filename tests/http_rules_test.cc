// The rules the HTTP client and the remote paths follow, checked against values worked out by hand
// from the specifications: RFC 3986 / SigV4 encoding, RFC 9110's Retry-After and redirects, AWS's
// bucket naming rules. The transfers themselves are tested through real servers
// (tests/interop/http_faults_test.py, s3_dataset_test.py).
#include <gtest/gtest.h>

#include "storage/http/http_client.h"
#include "storage/http/http_range_file.h"
#include "storage/remote_dataset.h"
#include "storage/s3/s3_object_store.h"
#include "storage/url.h"

namespace shardpack {
namespace {

TEST(UriEncode, KeepsOnlyTheUnreservedCharactersAsSigV4Does) {
  // é is C3 A9 in UTF-8; '+' is 2B, ' ' 20, '%' 25, '=' 3D; '~' stays.
  EXPECT_EQ(UriEncode("my data+v1\xc3\xa9/x=1~%", true), "my%20data%2Bv1%C3%A9/x%3D1~%25");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(PercentDecode("my%20data%2Bv1%C3%A9/%zz%4"), "my data+v1\xc3\xa9/%zz%4");
}

// RFC 9110 §14.4: "Content-Range: bytes first-last/complete-length". A range read takes the answer
// only when it names the bytes asked for, in a file of the size known (any size when unknown).
TEST(ContentRange, NamesExactlyTheBytesAskedForInAFileOfTheKnownSize) {
  uint64_t total = 0;
  EXPECT_TRUE(ContentRangeIs("bytes 100-199/5000", 100, 199, 5000, &total));
  EXPECT_EQ(total, 5000u);
  EXPECT_TRUE(ContentRangeIs("bytes 0-0/1", 0, 0, kUnknownSize, &total));
  EXPECT_EQ(total, 1u);
  EXPECT_FALSE(ContentRangeIs("bytes 100-199/5001", 100, 199, 5000, &total));  // the file changed size
  EXPECT_EQ(total, 5001u);
  EXPECT_FALSE(ContentRangeIs("bytes 100-198/5000", 100, 199, 5000, &total));  // fewer bytes than asked
  EXPECT_FALSE(ContentRangeIs("bytes 101-199/5000", 100, 199, 5000, &total));  // other bytes
  EXPECT_FALSE(ContentRangeIs("bytes 100-199/*", 100, 199, 5000, &total));     // length unknown to the server
  EXPECT_FALSE(ContentRangeIs("bytes */5000", 100, 199, 5000, &total));        // an unsatisfied range's answer
  EXPECT_FALSE(ContentRangeIs("items 100-199/5000", 100, 199, 5000, &total));
  EXPECT_FALSE(ContentRangeIs("bytes 100-199/5000x", 100, 199, 5000, &total));
  EXPECT_FALSE(ContentRangeIs("bytes -100-199/5000", 100, 199, 5000, &total));
  EXPECT_FALSE(ContentRangeIs("bytes 100-199/18446744073709551616", 100, 199, kUnknownSize, &total));  // 2^64
}

TEST(Urls, OriginsAndCredentials) {
  EXPECT_EQ(UrlOrigin("https://Bucket.S3.example.com/x?y"), "https://bucket.s3.example.com:443");
  EXPECT_EQ(UrlOrigin("http://u:p@127.0.0.1:8080/ds"), "http://127.0.0.1:8080");
  EXPECT_EQ(UrlOrigin("http://[::1]/ds"), "http://[::1]:80");
  EXPECT_EQ(UrlOrigin("ftp://host/x"), "");
  std::string user, password, bare;
  ASSERT_TRUE(SplitUrlCredentials("https://alice:s%40cret@host:8443/ds/a@b.tar", &user, &password, &bare));
  EXPECT_EQ(user, "alice");
  EXPECT_EQ(password, "s@cret");
  EXPECT_EQ(bare, "https://host:8443/ds/a@b.tar");
  EXPECT_FALSE(SplitUrlCredentials("https://host/ds/a@b.tar", &user, &password, &bare));
  EXPECT_EQ(bare, "https://host/ds/a@b.tar");
  EXPECT_EQ(RedactUrl("http://token@host/x"), "http://host/x");
}

TEST(RetryDelay, FullJitterUnderACappedDoublingAndRetryAfterWithinTheCap) {
  HttpOptions o;  // 0.25 s doubling, capped at 20 s
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, -1, 0.5), 0.125);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 3, -1, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 8, -1, 1.0), 20.0);  // 0.25 * 128 = 32, capped
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1000, -1, 0.5), 10.0);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, 3, 0.0), 3.0);      // the server's word
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, 3600, 0.0), 20.0);  // up to the cap
  // Retry-After: delta-seconds, or an HTTP date (1445412480 is Wed, 21 Oct 2015 07:28:00 GMT).
  EXPECT_DOUBLE_EQ(ParseRetryAfter("120", 0), 120);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 30), 30);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 30), 0);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("soon", 0), -1);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("", 0), -1);
}

TEST(CheckRedirect, BoundedHttpOnlyNeverDowngraded) {
  EXPECT_TRUE(CheckRedirect("http://a/x", 302, "http://b/x", 0, 5).ok());
  EXPECT_TRUE(CheckRedirect("https://a/x", 301, "https://b/x", 4, 5).ok());
  EXPECT_EQ(CheckRedirect("http://u:p@a/x", 302, "http://a/y", 5, 5).message(),
            "GET http://a/x answered HTTP 302 to http://a/y: more than 5 redirects (a loop?); refused");
  EXPECT_EQ(CheckRedirect("https://a/x", 307, "http://a/x", 0, 5).message(),
            "GET https://a/x answered HTTP 307 to http://a/x: a redirect from https to http is refused (it would go "
            "unencrypted)");
  EXPECT_EQ(CheckRedirect("http://a/x", 302, "file:///etc/passwd", 0, 5).message(),
            "GET http://a/x answered HTTP 302 to file:///etc/passwd, not http(s): refused");
  EXPECT_EQ(CheckRedirect("http://a/x", 302, "", 0, 5).message(),
            "GET http://a/x answered HTTP 302 without a Location to follow");
}

TEST(S3Names, BucketsFollowAwsRulesAndKeysAreEncodedOnce) {
  for (const char* bad : {"evil.example?x", "ab", "Bucket", "-bucket", "bucket-", "my..bucket", "192.168.1.1",
                          "xn--bucket", "bucket-s3alias", "my_bucket", "my bucket"}) {
    S3Location location;
    const Status s = ParseS3Location(std::string("s3://") + bad + "/ds", RemoteOptions::S3(), &location);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("is not a valid S3 bucket name"), std::string::npos) << s.message();
  }
  S3Location location;
  ASSERT_TRUE(ParseS3Location("s3://bench/my data+v1\xc3\xa9/", RemoteOptions::S3(), &location).ok());
  EXPECT_EQ(location.prefix, "my data+v1\xc3\xa9");
  EXPECT_EQ(S3KeyUrl(location, location.prefix), location.bucket_url + "/my%20data%2Bv1%C3%A9");
  EXPECT_EQ(S3KeyUrl(location, ""), location.bucket_url);
}

TEST(CheckDatasetFileName, EncodedEscapesAreRefusedAsTheLiteralOnes) {
  for (const char* bad : {"../x.tar", "%2e%2e/x.tar", "%2E%2E%2Fetc", "a%2fb.tar", "a%5cb.tar", "/x.tar", "a\nb.tar",
                          "a%0ab.tar", "http://x/y.tar", "a?b.tar"}) {
    EXPECT_EQ(CheckDatasetFileName(bad).code(), Status::Code::kDataLoss) << bad;
  }
  for (const char* good : {"shard-000000.tar", "train/shard 1+\xc3\xa9.tar", "100%.tar"}) {
    EXPECT_TRUE(CheckDatasetFileName(good).ok()) << good;
  }
  EXPECT_EQ(RemoteFileUrl("http://h/ds", "train/shard 1+\xc3\xa9.tar"), "http://h/ds/train/shard%201%2B%C3%A9.tar");
}

}  // namespace
}  // namespace shardpack
