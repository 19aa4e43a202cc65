#include "storage/http/http_backend.h"

#include <algorithm>

namespace shardpack {
namespace {

class WebServerBackend final : public StorageBackend {
 public:
  explicit WebServerBackend(const char* scheme) : scheme_(scheme) {}
  const char* scheme() const override { return scheme_; }
  Status ClientUrl(const std::string& url, const RemoteOptions&, std::string* client_url) const override {
    *client_url = url;
    return Status::OK();
  }
  std::unique_ptr<HttpClient> NewClient(const HttpOptions& http) const override { return NewCurlHttpClient(http); }
  Status NewOutputEnv(const Location& out, const RemoteOptions&, Env*, const UploadOrderOf&,
                      std::unique_ptr<Env>*) const override {
    return Status::InvalidArgument(out.shown +
                                   ": an output goes to a local folder or to s3://BUCKET/PREFIX (http(s):// is "
                                   "read-only)");
  }

 private:
  const char* const scheme_;
};

}  // namespace

const StorageBackend* HttpBackend() {
  static const WebServerBackend backend("http");
  return &backend;
}

const StorageBackend* HttpsBackend() {
  static const WebServerBackend backend("https");
  return &backend;
}

HttpOptions HttpOptionsFor(const RemoteOptions& options) {
  HttpOptions o;
  const RemoteOptions::Http& h = options.http;
  if (h.attempts > 0) o.attempts = std::min(h.attempts, 1000);
  if (h.timeout_seconds > 0) o.connect_timeout_seconds = o.low_speed_seconds = h.timeout_seconds;
  if (h.max_backoff_seconds > 0) o.max_backoff_seconds = h.max_backoff_seconds;
  if (h.retry_seconds > 0) o.retry_seconds = h.retry_seconds;
  if (h.max_bytes > 0) o.max_body_bytes = h.max_bytes;
  return o;
}

}  // namespace shardpack
