#include "storage/http/http_range_file.h"

#include <charconv>
#include <cstring>
#include <string_view>

namespace shardpack {
namespace {

// A decimal number taking all of `text`.
bool ParseDecimal(std::string_view text, uint64_t* value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

class HttpRangeFile final : public RandomAccessFile {
 public:
  HttpRangeFile(std::shared_ptr<HttpClientPool> clients, std::string url, std::string name, uint64_t size,
                uint64_t max_bytes)
      : clients_(std::move(clients)),
        url_(std::move(url)),
        name_(std::move(name)),
        max_bytes_(max_bytes),
        size_(size) {}

  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    uint64_t size = 0;
    SHARDPACK_RETURN_IF_ERROR(Size(&size));
    if (offset > size || n > size - offset) {
      return Status::DataLoss(name_ + ": " + std::to_string(n) + " bytes at " + std::to_string(offset) +
                              " asked for, the file holds " + std::to_string(size));
    }
    if (n == 0) return Status::OK();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (whole_ != nullptr) {
        std::memcpy(scratch, whole_->data() + offset, n);
        if (n < size) whole_.reset();  // the caller reads parts now: they go by range
        return Status::OK();
      }
    }
    return ReadRange(offset, n, size, scratch);
  }

  Status Size(uint64_t* size) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (size_ == kUnknownSize) SHARDPACK_RETURN_IF_ERROR(FetchWhole());
    *size = size_;
    return Status::OK();
  }

  // 0: the body FetchWhole keeps lasts from opening to the first read of a part, which a reader
  // makes next (LineFile: the line of the sample it opened the file for), so a reader that counts
  // what its open files keep (ShardIndexCache, when it takes the file) would count bytes that are
  // about to go: 1.4 MB for a side file of 10,000 lines that keeps 5 KB of marks.
  uint64_t memory_bytes() const override { return 0; }
  bool reads_are_requests() const override { return true; }

 private:
  // The whole file into whole_, and its size. Called under mu_.
  Status FetchWhole() const {
    HttpRequest request;
    request.method = "GET";
    request.url = url_;
    HttpResponse response;
    SHARDPACK_RETURN_IF_ERROR(
        clients_->With([&](HttpClient* http) { return http->Send(request, max_bytes_, &response); }));
    if (response.status != 200) {
      return Status::IOError(name_ + ": the server answered a GET with HTTP " + std::to_string(response.status));
    }
    whole_ = std::make_unique<std::string>(std::move(response.body));
    size_ = whole_->size();
    return Status::OK();
  }

  Status ReadRange(uint64_t offset, size_t n, uint64_t size, char* scratch) const {
    const uint64_t last = offset + n - 1;
    HttpRequest request;
    request.method = "GET";
    request.url = url_;
    request.headers = {"Range: bytes=" + std::to_string(offset) + "-" + std::to_string(last)};
    HttpResponse response;
    const Status sent = clients_->With([&](HttpClient* http) { return http->Send(request, n, &response); });
    // A server that ignores Range answers 200 with the whole file, which passes n bytes at once.
    if (response.status == 200) {
      return Status::Unsupported(name_ +
                                 ": the server does not serve byte ranges (it answered a range request with "
                                 "the whole file), and reading a dataset at random without a cache folder needs "
                                 "them: set SHARDPACK_CACHE=DIR, or stream the dataset (the streaming shuffle)");
    }
    SHARDPACK_RETURN_IF_ERROR(sent);
    const auto range = response.headers.find("content-range");
    uint64_t total = 0;
    // IOError, not DataLoss: the server's answer is wrong, not the sample (which a loader would skip
    // as damaged, and go on asking a server that answers wrongly).
    if (response.status != 206 || range == response.headers.end() ||
        !ContentRangeIs(range->second, offset, last, size, &total)) {
      return Status::IOError(
          name_ + ": asked for bytes " + std::to_string(offset) + "-" + std::to_string(last) + " of " +
          std::to_string(size) + ", the server answered HTTP " + std::to_string(response.status) +
          (range == response.headers.end() ? " without a Content-Range" : " with Content-Range " + range->second) +
          (total != size && total != 0 ? " (the file changed on the server since the dataset was opened)" : ""));
    }
    if (response.body.size() != n) {
      return Status::IOError(name_ + ": asked for " + std::to_string(n) + " bytes at " + std::to_string(offset) +
                             ", the server sent " + std::to_string(response.body.size()));
    }
    std::memcpy(scratch, response.body.data(), n);
    return Status::OK();
  }

  const std::shared_ptr<HttpClientPool> clients_;
  const std::string url_, name_;
  const uint64_t max_bytes_;
  mutable std::mutex mu_;
  mutable uint64_t size_;                       // kUnknownSize until FetchWhole
  mutable std::unique_ptr<std::string> whole_;  // FetchWhole's body, until a read of a part
};

}  // namespace

Status HttpClientPool::With(const std::function<Status(HttpClient*)>& request) {
  std::unique_ptr<HttpClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      client = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (client == nullptr) client = new_client_();
  const Status status = request(client.get());
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(client));
  return status;
}

std::unique_ptr<RandomAccessFile> NewHttpRangeFile(std::shared_ptr<HttpClientPool> clients, std::string url,
                                                   std::string name, uint64_t size, uint64_t max_bytes) {
  return std::make_unique<HttpRangeFile>(std::move(clients), std::move(url), std::move(name), size, max_bytes);
}

bool ContentRangeIs(const std::string& value, uint64_t first, uint64_t last, uint64_t size, uint64_t* total) {
  *total = 0;
  std::string_view v(value);
  constexpr std::string_view kUnit = "bytes ";
  if (v.substr(0, kUnit.size()) != kUnit) return false;
  v.remove_prefix(kUnit.size());
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  uint64_t a = 0, b = 0;
  if (!ParseDecimal(v.substr(0, dash), &a) || !ParseDecimal(v.substr(dash + 1, slash - dash - 1), &b) ||
      !ParseDecimal(v.substr(slash + 1), total)) {
    return false;
  }
  return a == first && b == last && (size == kUnknownSize || *total == size);
}

}  // namespace shardpack
