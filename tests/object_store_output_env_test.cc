// The object-store Env's order and bounds under concurrency (storage/s3/object_store_output_env.h), with the
// store served in memory through the HttpClient seam, so that uploads can be slowed, failed and
// watched one by one; the ThreadSanitizer stage of scripts/test.sh runs it too. The same Env against
// a real S3-protocol server, signed and checked: tests/interop/s3_output_test.py.
#include "storage/s3/object_store_output_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "ops/pack/output_env.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;
constexpr char kEndpoint[] = "http://store.test";

// The S3 API's subset that the Env uses, in memory: PUT, multipart, HEAD, DELETE, GET of objects,
// and ListObjectsV2. Keys are what follows the bucket in the URL.
class MemoryS3 {
 public:
  struct Object {
    std::string bytes;
    std::string xxh64;  // x-amz-meta-xxh64
  };
  // Called before each request with its method, key and query; a status other than OK fails the
  // request with it (as the HTTP client reports a failure that its retries did not get past).
  std::function<Status(const HttpRequest& request, const std::string& key, const std::string& query)> before;

  Status Serve(const HttpRequest& request, HttpResponse* response) {
    std::string key, query;
    Split(request.url, &key, &query);
    if (before) SHARDPACK_RETURN_IF_ERROR(before(request, key, query));
    std::lock_guard<std::mutex> lock(mu_);
    ++requests_[request.method + " " + key + (query.empty() ? "" : "?" + query.substr(0, query.find('=')))];
    if (request.method == "GET" && query.find("list-type=2") != std::string::npos) return List(query, response);
    if (request.method == "GET" && query.size() >= 8 && query.compare(query.size() - 8, 8, "uploads=") == 0) {
      return ListUploads(query, response);
    }
    if (request.method == "PUT" && query.empty()) {
      objects_[key] = {std::string(request.body), Header(request, "x-amz-meta-xxh64")};
      return Status::OK();
    }
    if (request.method == "POST" && query == "uploads=") {
      const std::string id = "upload" + std::to_string(next_upload_++);
      uploads_[id] = {key, Header(request, "x-amz-meta-xxh64"), {}};
      response->body = "<InitiateMultipartUploadResult><UploadId>" + id + "</UploadId></InitiateMultipartUploadResult>";
      return Status::OK();
    }
    if (request.method == "PUT") {  // partNumber=N&uploadId=ID
      const int part = std::stoi(query.substr(query.find('=') + 1));
      Upload& upload = uploads_.at(query.substr(query.find("uploadId=") + 9));
      upload.parts[part] = std::string(request.body);
      response->headers["etag"] = "\"part" + std::to_string(part) + "\"";
      return Status::OK();
    }
    if (request.method == "POST") {  // uploadId=ID: complete, the parts in order
      const std::string id = query.substr(query.find('=') + 1);
      Upload& upload = uploads_.at(id);
      Object object{"", upload.xxh64};
      int expected = 1;
      for (const auto& [number, bytes] : upload.parts) {
        if (number != expected++ ||
            request.body.find("<ETag>\"part" + std::to_string(number) + "\"</ETag>") == std::string_view::npos) {
          return Status::InvalidArgument("bad part list for " + key);
        }
        object.bytes += bytes;
      }
      objects_[upload.key] = object;
      uploads_.erase(id);
      return Status::OK();
    }
    if (request.method == "HEAD" || request.method == "DELETE") {
      const auto it = objects_.find(key);
      if (!query.empty()) {  // DELETE ?uploadId=: abort
        uploads_.erase(query.substr(query.find('=') + 1));
        return Status::OK();
      }
      if (it == objects_.end()) return Status::NotFound(request.url + " does not exist (HTTP 404)");
      if (request.method == "DELETE") {
        objects_.erase(it);
        return Status::OK();
      }
      response->headers["content-length"] = std::to_string(it->second.bytes.size());
      if (!it->second.xxh64.empty()) response->headers["x-amz-meta-xxh64"] = it->second.xxh64;
      return Status::OK();
    }
    return Status::InvalidArgument("unexpected " + request.method + " " + request.url);
  }

  Status Get(const std::string& url, std::string* bytes) {
    std::string key, query;
    Split(url, &key, &query);
    HttpRequest get;
    get.method = "GET";
    get.url = url;
    if (before) SHARDPACK_RETURN_IF_ERROR(before(get, key, query));
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = objects_.find(key);
    if (it == objects_.end()) return Status::NotFound(url + " does not exist (HTTP 404)");
    *bytes = it->second.bytes;
    return Status::OK();
  }

  std::map<std::string, Object> objects() {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_;
  }
  bool Has(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_.count(key) > 0;
  }
  void SetChecksum(const std::string& key, const std::string& xxh64) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.at(key).xxh64 = xxh64;
  }
  int Requests(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_[what];
  }
  size_t OpenUploads() {
    std::lock_guard<std::mutex> lock(mu_);
    return uploads_.size();
  }

 private:
  struct Upload {
    std::string key, xxh64;
    std::map<int, std::string> parts;
  };

  static void Split(const std::string& url, std::string* key, std::string* query) {
    const std::string path = url.substr(std::string(kEndpoint).size() + std::string("/bucket").size());
    const size_t q = path.find('?');
    *key = path.substr(0, q);
    if (!key->empty() && (*key)[0] == '/') key->erase(0, 1);
    *query = q == std::string::npos ? "" : path.substr(q + 1);
  }

  static std::string Header(const HttpRequest& request, const std::string& name) {
    for (const std::string& h : request.headers) {
      if (h.rfind(name + ": ", 0) == 0) return h.substr(name.size() + 2);
    }
    return "";
  }

  // ListObjectsV2 with delimiter '/' (prefix %2F-encoded as the Env writes it).
  Status List(const std::string& query, HttpResponse* response) {
    std::string prefix = query.substr(query.find("prefix=") + 7);
    for (size_t at; (at = prefix.find("%2F")) != std::string::npos;) prefix.replace(at, 3, "/");
    response->body = "<ListBucketResult><IsTruncated>false</IsTruncated>";
    std::set<std::string> folders;
    for (const auto& [key, object] : objects_) {
      if (key.rfind(prefix, 0) != 0) continue;
      const size_t slash = key.find('/', prefix.size());
      if (slash != std::string::npos) {
        folders.insert(key.substr(0, slash + 1));
        continue;
      }
      response->body +=
          "<Contents><Key>" + key + "</Key><Size>" + std::to_string(object.bytes.size()) + "</Size></Contents>";
    }
    for (const std::string& f : folders)
      response->body += "<CommonPrefixes><Prefix>" + f + "</Prefix></CommonPrefixes>";
    response->body += "</ListBucketResult>";
    return Status::OK();
  }

  // ListMultipartUploads: the uploads started and not finished under the prefix ("prefix=P&uploads=").
  Status ListUploads(const std::string& query, HttpResponse* response) {
    std::string prefix = query.substr(query.find("prefix=") + 7);
    prefix = prefix.substr(0, prefix.find('&'));
    for (size_t at; (at = prefix.find("%2F")) != std::string::npos;) prefix.replace(at, 3, "/");
    response->body = "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>";
    for (const auto& [id, upload] : uploads_) {
      if (upload.key.rfind(prefix, 0) == 0) {
        response->body += "<Upload><Key>" + upload.key + "</Key><UploadId>" + id + "</UploadId></Upload>";
      }
    }
    response->body += "</ListMultipartUploadsResult>";
    return Status::OK();
  }

  std::mutex mu_;
  std::map<std::string, Object> objects_;
  std::map<std::string, Upload> uploads_;
  std::map<std::string, int> requests_;
  int next_upload_ = 0;
};

class MemoryS3Client final : public HttpClient {
 public:
  explicit MemoryS3Client(MemoryS3* store) : store_(store) {}
  Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink, const Rewind&) override {
    std::string bytes;
    SHARDPACK_RETURN_IF_ERROR(store_->Get(url, &bytes));
    return sink(bytes);
  }
  Status Send(const HttpRequest& request, uint64_t, HttpResponse* response) override {
    *response = HttpResponse();
    return store_->Serve(request, response);
  }

 private:
  MemoryS3* store_;
};

class ObjectStoreOutputTest : public testing::DatasetTest {
 protected:
  void SetUp() override {
    MakeTree(3, 7);  // 21 images, every fifth a PNG: 6 shards of 4
    PackOptions o = Options();
    PackResult r;
    ASSERT_TRUE(PackTo(out("local"), o, &r).ok());
    for (const auto& e : fs::directory_iterator(out("local"))) {
      local_[e.path().filename().string()] = testing::ReadFile(e.path().string());
    }
  }

  PackOptions Options() {
    PackOptions o = QuietOptions();
    o.samples_per_shard = 4;
    return o;
  }

  // An object-store Env for s3://bucket/data/local (so that the dataset's name is "local", as the
  // reference's), 2 uploaders, parts of 4 KiB (every shard goes up in parts).
  std::unique_ptr<Env> StoreEnv() {
    ObjectStoreOutputOptions options;
    options.part_size = 4096;
    options.uploads = 2;
    options.staging_parent = dir_.Sub("staging");
    options.s3.endpoint_url = kEndpoint;
    options.upload_order = PackUploadOrder;  // what pack gives the Env it makes itself
    options.new_http_client = [this](const HttpOptions&) { return std::make_unique<MemoryS3Client>(&store_); };
    std::unique_ptr<Env> env;
    EXPECT_TRUE(NewObjectStoreOutputEnv(kUrl, Env::Default(), options, &env).ok());
    return env;
  }

  Status PackIntoStore(bool resume = false) {
    std::unique_ptr<Env> env = StoreEnv();
    PackOptions o = Options();
    o.env = env.get();
    o.resume = resume;
    PackResult r;
    return Pack(src(), kUrl, o, &r);
  }

  // The dataset in the store: file name -> bytes.
  std::map<std::string, std::string> Stored() {
    std::map<std::string, std::string> files;
    for (const auto& [key, object] : store_.objects()) {
      if (key.rfind("data/local/", 0) == 0) files[key.substr(11)] = object.bytes;
    }
    return files;
  }

  // Records a violation when a manifest or journal goes up before a file it lists is in the store,
  // or when more than 2 published files wait in the staging folder; slows shard uploads a little,
  // unevenly, so that uploads overlap and finish out of order.
  Status CheckOrder(const HttpRequest& request, const std::string& key, const std::string& query) {
    size_t staged = 0;
    for (const auto& folder : fs::directory_iterator(dir_.Sub("staging"))) {
      for (const auto& f : fs::directory_iterator(folder.path())) {
        staged += f.path().filename().string().rfind(".upload-", 0) == 0;
      }
    }
    if (staged > 2) Violation(std::to_string(staged) + " published files staged at " + key);
    const bool state = EndsWith(key, "/manifest.json") || EndsWith(key, "/pack-journal.json");
    if (request.method == "PUT" && query.empty() && state) {
      const nlohmann::json j = nlohmann::json::parse(request.body);
      for (const nlohmann::json& shard : j.at("shardlist")) {
        for (const std::string& file :
             {shard.at("url").get<std::string>(), shard.at("index").at("file").get<std::string>(),
              shard.at("sample_table").at("file").get<std::string>()}) {
          if (!store_.Has("data/local/" + file)) Violation(key + " went up before " + file);
        }
      }
      if (EndsWith(key, "/manifest.json")) ++manifests_;
    }
    if (request.method == "PUT" && key.find("shard-") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + (++puts_ * 7) % 11));
    }
    return Status::OK();
  }

  void Violation(const std::string& what) {
    std::lock_guard<std::mutex> lock(violations_mu_);
    violations_.push_back(what);
  }
  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> lock(violations_mu_);
    return violations_;
  }

  static constexpr char kUrl[] = "s3://bucket/data/local";
  MemoryS3 store_;
  std::map<std::string, std::string> local_;
  std::mutex violations_mu_;
  std::vector<std::string> violations_;
  std::atomic<int> puts_{0};
  std::atomic<int> manifests_{0};
};

TEST_F(ObjectStoreOutputTest, APackUploadedInPartsEqualsALocalPackAndKeepsItsOrder) {
  fs::create_directories(dir_.Sub("staging"));
  store_.before = [this](const HttpRequest& r, const std::string& k, const std::string& q) {
    return CheckOrder(r, k, q);
  };
  ASSERT_TRUE(PackIntoStore().ok());
  EXPECT_EQ(Stored(), local_);  // manifest included; no journal left
  EXPECT_EQ(violations(), std::vector<std::string>());
  EXPECT_EQ(manifests_.load(), 1);
  EXPECT_GT(store_.Requests("POST data/local/shard-000000.tar?uploads"), 0);  // 4 KiB parts
  EXPECT_EQ(store_.OpenUploads(), 0u);
  EXPECT_TRUE(fs::is_empty(dir_.Sub("staging")));  // the staging folder is removed
}

TEST_F(ObjectStoreOutputTest, AShardThatCannotBeUploadedStopsThePackAndResumeFinishesIt) {
  fs::create_directories(dir_.Sub("staging"));
  store_.before = [this](const HttpRequest& r, const std::string& k, const std::string& q) {
    if (r.method == "PUT" && k == "data/local/shard-000003.tar" && q.empty()) return Status::IOError("injected");
    if (r.method == "POST" && k == "data/local/shard-000003.tar") return Status::IOError("injected");
    return CheckOrder(r, k, q);
  };
  const Status s = PackIntoStore();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(std::string("uploading ") + kUrl + "/shard-000003.tar: injected", 0), 0u) << s.message();
  std::map<std::string, std::string> left = Stored();
  EXPECT_EQ(left.count("manifest.json"), 0u);
  ASSERT_EQ(left.count("pack-journal.json"), 1u);
  const nlohmann::json journal = nlohmann::json::parse(left["pack-journal.json"]);
  std::vector<std::string> kept;
  for (const nlohmann::json& shard : journal.at("shardlist")) kept.push_back(shard.at("url"));
  ASSERT_FALSE(kept.empty());
  for (const std::string& f : kept) EXPECT_EQ(left.at(f), local_.at(f)) << f;
  EXPECT_EQ(std::count(kept.begin(), kept.end(), "shard-000003.tar"), 0);
  EXPECT_EQ(violations(), std::vector<std::string>());

  // Resumed without the fault: the same dataset, and the kept shards were not uploaded again.
  std::map<std::string, int> puts;
  for (const std::string& f : kept) puts[f] = store_.Requests("POST data/local/" + f + "?uploads");
  store_.before = [this](const HttpRequest& r, const std::string& k, const std::string& q) {
    return CheckOrder(r, k, q);
  };
  const Status resumed = PackIntoStore(/*resume=*/true);
  ASSERT_TRUE(resumed.ok()) << resumed.message();
  EXPECT_EQ(Stored(), local_);
  for (const std::string& f : kept) EXPECT_EQ(store_.Requests("POST data/local/" + f + "?uploads"), puts[f]) << f;
  EXPECT_EQ(violations(), std::vector<std::string>());
}

TEST_F(ObjectStoreOutputTest, ResumeRefusesAKeptShardWhoseStoredChecksumDiffers) {
  fs::create_directories(dir_.Sub("staging"));
  store_.before = [](const HttpRequest& r, const std::string& k, const std::string&) {
    return r.method == "POST" && k == "data/local/shard-000002.tar" ? Status::IOError("injected") : Status::OK();
  };
  ASSERT_FALSE(PackIntoStore().ok());
  store_.before = nullptr;
  store_.SetChecksum("data/local/shard-000000.tar", "0123456789abcdef");
  const Status s = PackIntoStore(/*resume=*/true);
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message().rfind(std::string(kUrl) + "/shard-000000.tar has XXH64 0123456789abcdef, not ", 0), 0u)
      << s.message();
  EXPECT_EQ(Stored().count("manifest.json"), 0u);
}

}  // namespace
}  // namespace shardpack
