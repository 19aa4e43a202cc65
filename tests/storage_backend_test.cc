// A storage backend added through the table (storage/storage_backend.h): "mirror://NAME", a local
// folder served as remote storage. Once registered, the public entry points (the reader, verify,
// the loader) read a dataset through it with no other change, and its requests are the ones the
// backend's client saw; pack refuses to write into it, as into any read-only store.
#include "storage/storage_backend.h"

#include <gtest/gtest.h>

#include <mutex>

#include "shardpack/dataset_reader.h"
#include "shardpack/loader.h"
#include "shardpack/verify.h"
#include "storage/location.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/folder_http_client.h"

namespace shardpack {
namespace {

// mirror://NAME is folder/NAME, fetched through FolderHttpClient (as http://test/NAME).
class MirrorBackend final : public StorageBackend {
 public:
  MirrorBackend(std::string folder, std::vector<std::string>* log, std::mutex* mu)
      : folder_(std::move(folder)), log_(log), mu_(mu) {}
  const char* scheme() const override { return "mirror"; }
  Status CheckLocation(const Location& location) const override {
    if (UrlPath(location.text).empty()) return Status::InvalidArgument(location.shown + ": name a dataset");
    return Status::OK();
  }
  Status ClientUrl(const std::string& url, const RemoteOptions&, std::string* client_url) const override {
    *client_url = "http://test/" + UrlPath(url);
    return Status::OK();
  }
  std::unique_ptr<HttpClient> NewClient(const HttpOptions&) const override {
    return std::make_unique<testing::FolderHttpClient>(folder_, log_, mu_);
  }

 private:
  const std::string folder_;
  std::vector<std::string>* log_;
  std::mutex* mu_;
};

class StorageBackendTest : public testing::DatasetTest {
 protected:
  std::vector<std::string> log_;
  std::mutex mu_;
};

TEST_F(StorageBackendTest, ANewBackendIsOneTableLine) {
  MakeTree(2, 5);  // 10 images
  PackOptions po = QuietOptions();
  po.samples_per_shard = 4;
  PackResult packed;
  ASSERT_TRUE(PackTo(out("server/ds"), po, &packed).ok());

  Location location;
  EXPECT_EQ(ParseLocation("mirror://ds", &location).message(),
            "mirror://ds: no storage backend reads mirror:// locations (known: http, https, s3; a local folder is "
            "given as a path)");

  static MirrorBackend* backend = nullptr;  // outlives the test: the table keeps it
  backend = new MirrorBackend(out("server"), &log_, &mu_);
  RegisterStorageBackend(backend);
  ASSERT_TRUE(ParseLocation("mirror://ds", &location).ok());
  EXPECT_EQ(location.backend, backend);
  EXPECT_EQ(ParseLocation("mirror://", &location).message(), "mirror://: name a dataset");
  EXPECT_EQ(ParseLocation("ftp://x", &location).message(),
            "ftp://x: no storage backend reads ftp:// locations (known: http, https, s3, mirror; a local folder is "
            "given as a path)");

  // The reader, cached: every sample as the local reader reads it.
  RemoteOptions remote;
  remote.cache_dir = out("cache");
  std::unique_ptr<DatasetReader> local, mirrored;
  ASSERT_TRUE(DatasetReader::Open(out("server/ds"), nullptr, &local).ok());
  const Status opened = DatasetReader::Open("mirror://ds", nullptr, &mirrored, remote);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_EQ(mirrored->size(), 10u);
  for (uint64_t i = 0; i < local->size(); ++i) {
    ReadSample a, b;
    ASSERT_TRUE(local->Read(i, &a).ok());
    ASSERT_TRUE(mirrored->Read(i, &b).ok()) << i;
    EXPECT_EQ(b.key, a.key);
    EXPECT_EQ(b.label, a.label);
    EXPECT_EQ(b.encoded, a.encoded);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_FALSE(log_.empty());
    EXPECT_EQ(log_.front(), "ds/manifest.json");  // the backend's client made the requests
    log_.clear();
  }

  // verify, streamed (no cache folder): through the same backend.
  VerifyOptions vo;
  VerifyReport report;
  const Status verified = Verify("mirror://ds", vo, &report);
  ASSERT_TRUE(verified.ok()) << verified.ToString();
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.samples, 10u);
  EXPECT_EQ(report.shards, 3u);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(std::count(log_.begin(), log_.end(), "ds/manifest.json"), 1);
  }

  // The loader over it: one epoch holds every sample once.
  LoaderOptions lo;
  lo.sampler.batch_size = 5;
  lo.sampler.shuffle = false;
  lo.height = lo.width = 8;
  lo.threads = 1;
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open("mirror://ds", lo, &loader).ok());
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  uint64_t images = 0;
  for (const Batch* batch = nullptr; loader->Next(&batch).ok() && batch != nullptr;) images += batch->count;
  EXPECT_EQ(images, 10u);

  // Written into: refused, as any backend that does not say how to write.
  PackResult r;
  EXPECT_EQ(Pack(src(), "mirror://out", po, &r).message(),
            "mirror://out: mirror:// storage is read-only here: write into a local folder or s3://BUCKET/PREFIX");
}

}  // namespace
}  // namespace shardpack
