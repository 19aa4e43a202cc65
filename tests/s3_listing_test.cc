// S3ObjectStore::List against listings written by hand in ListObjectsV2's XML, through the
// HttpClient seam (the real exchange is tested against s3rver in tests/interop): pages followed by
// their continuation tokens, XML entities decoded, entries outside the prefix left out, and every
// listing loop ends, also when the store hands back a token it gave before.
#include <gtest/gtest.h>

#include "storage/s3/s3_object_store.h"

namespace shardpack {
namespace {

// Answers request k with pages[k] (404 past the last), and records the URLs asked for.
class ScriptedS3Client final : public HttpClient {
 public:
  explicit ScriptedS3Client(std::vector<std::string> pages) : pages_(std::move(pages)) {}
  std::vector<std::string> urls;

  Status Get(const std::string& url, const std::function<Status(std::string_view)>&, const Rewind&) override {
    return Status::Unsupported("this test lists only, it does not GET " + url);
  }
  Status Send(const HttpRequest& request, uint64_t, HttpResponse* response) override {
    urls.push_back(request.url);
    if (urls.size() > pages_.size()) return Status::NotFound(request.url + " does not exist (HTTP 404)");
    response->status = 200;
    response->body = pages_[urls.size() - 1];
    return Status::OK();
  }

 private:
  const std::vector<std::string> pages_;
};

std::string Page(const std::string& entries, const std::string& next_token) {
  return "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name>" + entries + "<IsTruncated>" +
         (next_token.empty() ? "false" : "true") + "</IsTruncated>" +
         (next_token.empty() ? "" : "<NextContinuationToken>" + next_token + "</NextContinuationToken>") +
         "</ListBucketResult>";
}

std::string File(const std::string& key, uint64_t size) {
  return "<Contents><Key>" + key + "</Key><Size>" + std::to_string(size) + "</Size></Contents>";
}

std::string Folder(const std::string& prefix) {
  return "<CommonPrefixes><Prefix>" + prefix + "</Prefix></CommonPrefixes>";
}

const S3Location kLocation{"http://127.0.0.1:9/b", "data/set"};

TEST(S3Listing, FollowsEveryPageAndKeepsOnlyWhatLiesDirectlyUnderThePrefix) {
  ScriptedS3Client http({
      Page(File("data/set/manifest.json", 120) + File("data/set/a&amp;b.tar", 7) + Folder("data/set/part-1/"), "t/1=+"),
      Page(File("data/set/shard-000001.tar", 4096) + File("data/other/x.tar", 1) + File("data/set/deep/y.tar", 2) +
               File("data/set/", 0) + Folder("data/elsewhere/"),
           ""),
  });
  S3ObjectStore store(kLocation, &http);
  S3Listing listing;
  ASSERT_TRUE(store.List(&listing).ok());
  EXPECT_EQ(listing.files,
            (std::map<std::string, uint64_t>{{"a&b.tar", 7}, {"manifest.json", 120}, {"shard-000001.tar", 4096}}));
  EXPECT_EQ(listing.folders, (std::set<std::string>{"part-1"}));
  // The second page is asked for with the first one's token, URI-encoded, parameters sorted.
  ASSERT_EQ(http.urls.size(), 2u);
  EXPECT_EQ(http.urls[0], "http://127.0.0.1:9/b?delimiter=%2F&list-type=2&prefix=data%2Fset%2F");
  EXPECT_EQ(http.urls[1],
            "http://127.0.0.1:9/b?continuation-token=t%2F1%3D%2B&delimiter=%2F&list-type=2&prefix=data%2Fset%2F");
}

TEST(S3Listing, AStoreThatListsInCirclesIsAnErrorNotAnEndlessLoop) {
  ScriptedS3Client http({Page(File("data/set/a.tar", 1), "A"), Page(File("data/set/b.tar", 1), "B"),
                         Page(File("data/set/c.tar", 1), "A")});
  S3ObjectStore store(kLocation, &http);
  S3Listing listing;
  const Status s = store.List(&listing);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.message(),
            "GET http://127.0.0.1:9/b?continuation-token=B&delimiter=%2F&list-type=2&prefix=data%2Fset%2F: the listing "
            "gives back a continuation token it gave before (A); the store lists in circles");
  EXPECT_EQ(http.urls.size(), 3u);
}

TEST(S3Listing, ATruncatedListingWithoutATokenAndAnAnswerThatIsNoListingAreErrors) {
  ScriptedS3Client truncated({"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"});
  S3Listing listing;
  Status s = S3ObjectStore(kLocation, &truncated).List(&listing);
  EXPECT_EQ(s.message(),
            "GET http://127.0.0.1:9/b?delimiter=%2F&list-type=2&prefix=data%2Fset%2F: a truncated listing without a "
            "continuation token");
  ScriptedS3Client html({"<html>proxy login</html>"});
  s = S3ObjectStore(kLocation, &html).List(&listing);
  EXPECT_EQ(s.message(),
            "GET http://127.0.0.1:9/b?delimiter=%2F&list-type=2&prefix=data%2Fset%2F answered no listing: <html>proxy "
            "login</html>");
}

}  // namespace
}  // namespace shardpack
