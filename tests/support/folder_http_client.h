// FolderHttpClient: the HttpClient seam serving the files of a local folder, recording every
// request, for tests of the rules above HTTP (the HTTP side itself is tested against nginx and a
// faulty server in tests/interop).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "storage/http/http_client.h"

namespace shardpack::testing {

// Serves http://test/NAME from folder/NAME; 404 for what is not there.
class FolderHttpClient final : public HttpClient {
 public:
  FolderHttpClient(std::string folder, std::vector<std::string>* log, std::mutex* mu)
      : folder_(std::move(folder)), log_(log), mu_(mu) {}
  Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink, const Rewind&) override {
    const std::string name = url.substr(url.find("://test/") + 8);
    {
      std::lock_guard<std::mutex> lock(*mu_);
      log_->push_back(name);
    }
    std::string bytes;
    if (!Env::Default()->ReadFile(folder_ + "/" + name, 1 << 30, &bytes).ok()) {
      return Status::NotFound(url + " does not exist (HTTP 404)");
    }
    return sink(bytes);
  }
  Status Send(const HttpRequest& request, uint64_t, HttpResponse*) override {
    return Status::Unsupported("this test serves GETs only, not " + request.method);
  }

 private:
  const std::string folder_;
  std::vector<std::string>* log_;
  std::mutex* mu_;
};

}  // namespace shardpack::testing
