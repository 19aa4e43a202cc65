// Fuzz target: S3 ListObjectsV2 and ListMultipartUploads answers, as a store (or whatever answers
// in its place) sends them to `shardpack pack ... s3://` when it resumes. The input is split at NUL
// bytes into the pages of one listing, served in turn, the last one again and again after that (a
// store that keeps answering): whatever they say, listing must end, and take no name from outside
// the prefix (an upload it lists is aborted by name).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/s3/s3_object_store.h"

namespace {

class PagesHttpClient final : public shardpack::HttpClient {
 public:
  explicit PagesHttpClient(std::vector<std::string> pages) : pages_(std::move(pages)) {}
  shardpack::Status Get(const std::string& url, const std::function<shardpack::Status(std::string_view)>&,
                        const Rewind&) override {
    return shardpack::Status::Unsupported(url);
  }
  shardpack::Status Send(const shardpack::HttpRequest&, uint64_t, shardpack::HttpResponse* response) override {
    response->status = 200;
    response->body = pages_[std::min(next_++, pages_.size() - 1)];
    return shardpack::Status::OK();
  }

 private:
  const std::vector<std::string> pages_;
  size_t next_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> pages;
  for (size_t at = 0; at <= input.size() && pages.size() < 64;) {
    const size_t end = std::min(input.find('\0', at), input.size());
    pages.push_back(input.substr(at, end - at));
    at = end + 1;
  }
  PagesHttpClient uploads_http(pages);
  PagesHttpClient http(std::move(pages));
  shardpack::S3ObjectStore uploads_store({"http://127.0.0.1:9/b", "data/set"}, &uploads_http);
  std::vector<std::pair<std::string, std::string>> uploads;
  (void)uploads_store.ListMultipartUploads(&uploads);
  for (const auto& [name, id] : uploads) {
    if (name.empty() || name.find('/') != std::string::npos || id.empty()) __builtin_trap();
  }
  shardpack::S3ObjectStore store({"http://127.0.0.1:9/b", "data/set"}, &http);
  shardpack::S3Listing listing;
  (void)store.List(&listing);
  for (const auto& [name, bytes] : listing.files) {
    if (name.empty() || name.find('/') != std::string::npos) __builtin_trap();
  }
  for (const std::string& name : listing.folders) {
    if (name.empty() || name.find('/') != std::string::npos) __builtin_trap();
  }
  return 0;
}
