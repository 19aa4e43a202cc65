// The libcurl HttpClient. libcurl does HTTP, TLS and connection reuse; this file adds the retry
// rule (which failures may pass, backoff with jitter) and the messages.
#include <curl/curl.h>

#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "ground/http_client.h"

namespace shardpack {
namespace {

// curl_global_init is not thread-safe: once per process, before the first handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  CURL* curl;
  const std::function<Status(std::string_view)>* sink;
  Status sink_status;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  Transfer* t = static_cast<Transfer*>(user);
  long code = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
  if (code >= 400) return size * count;  // an error page, not the object: dropped
  t->sink_status = (*t->sink)(std::string_view(data, size * count));
  return t->sink_status.ok() ? size * count : 0;  // 0 makes libcurl abort the transfer
}

class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(const HttpOptions& options) : options_(options) {
    InitCurlOnce();
    curl_ = curl_easy_init();
    if (!options_.aws.session_token.empty()) {
      // Temporary credentials: the token goes in a header, which libcurl then signs with the rest.
      const std::string token = "x-amz-security-token: " + options_.aws.session_token;
      aws_headers_ = curl_slist_append(aws_headers_, token.c_str());
    }
  }
  ~CurlHttpClient() override {
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
    curl_slist_free_all(aws_headers_);
  }

  Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink,
             const Rewind& rewind) override {
    if (curl_ == nullptr) return Status::IOError("cannot start libcurl for " + url);
    std::mt19937_64 jitter(std::random_device{}());
    double backoff = options_.backoff_seconds;
    Status last;
    uint64_t offset = 0;      // bytes the sink holds already: the next attempt asks for the rest
    bool from_start = false;  // the server did not honour a range: start over
    for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
      if (attempt > 1) {
        // Full jitter: a random wait up to the backoff, so that many nodes retrying do not return
        // in step.
        std::uniform_real_distribution<double> wait(0, backoff);
        std::this_thread::sleep_for(std::chrono::duration<double>(wait(jitter)));
        backoff *= 2;
        offset = rewind ? rewind(from_start) : 0;
      }
      bool retry = false;
      last = Attempt(url, sink, offset, &retry, &from_start);
      if (last.ok() || !retry) return last;
    }
    return Status::IOError(last.message() + " (gave up after " + std::to_string(options_.attempts) + " attempts)");
  }

 private:
  // One GET, of the body from `offset` on. *retry: the failure is one that another attempt may not
  // meet; *from_start: that attempt must ask for the whole body.
  Status Attempt(const std::string& url, const std::function<Status(std::string_view)>& sink, uint64_t offset,
                 bool* retry, bool* from_start) {
    Transfer transfer{curl_, &sink, Status::OK()};
    curl_easy_reset(curl_);  // keeps the connection cache
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, long(options_.connect_timeout_seconds * 1000));
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, long(options_.low_speed_bytes));
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, long(options_.low_speed_seconds));
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
    // Shards are large: fewer, larger reads from the socket and calls into the sink (the default
    // is 16 KiB) take a fast link's bytes at a fraction of the CPU.
    curl_easy_setopt(curl_, CURLOPT_BUFFERSIZE, 512L * 1024);
    if (!options_.aws.region.empty()) {
      // libcurl computes the signature (and sends x-amz-date, x-amz-content-sha256) itself.
      const std::string provider = "aws:amz:" + options_.aws.region + ":s3";
      curl_easy_setopt(curl_, CURLOPT_AWS_SIGV4, provider.c_str());
      curl_easy_setopt(curl_, CURLOPT_USERNAME, options_.aws.access_key_id.c_str());
      curl_easy_setopt(curl_, CURLOPT_PASSWORD, options_.aws.secret_access_key.c_str());
      curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, aws_headers_);
    }
    // With an offset libcurl sends "Range: bytes=offset-" and fails (CURLE_RANGE_ERROR) unless the
    // answer is that range, so the sink never gets a whole body appended to a part.
    curl_easy_setopt(curl_, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset));
    const CURLcode rc = curl_easy_perform(curl_);
    long code = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    *retry = false;
    *from_start = false;
    if (!transfer.sink_status.ok()) return transfer.sink_status;
    if (rc == CURLE_RANGE_ERROR) {
      *retry = *from_start = true;
      return Status::IOError("GET " + url + " from byte " + std::to_string(offset) +
                             ": the server does not serve ranges");
    }
    if (rc != CURLE_OK) {
      // Timeouts, refused or reset connections, bodies cut short: the network's, worth another try.
      *retry = rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR ||
               rc == CURLE_SEND_ERROR || rc == CURLE_PARTIAL_FILE || rc == CURLE_GOT_NOTHING;
      return Status::IOError("cannot GET " + url + ": " + curl_easy_strerror(rc));
    }
    if (code == 404) return Status::NotFound(url + " does not exist (HTTP 404)");
    if (code == 429 || code >= 500) {
      *retry = true;
      return Status::IOError("GET " + url + " answered HTTP " + std::to_string(code));
    }
    if (code >= 400) {
      return Status::InvalidArgument(
          "GET " + url + " answered HTTP " + std::to_string(code) +
          (code == 401 || code == 403 ? " (access denied: check the URL and credentials)" : ""));
    }
    return Status::OK();
  }

  HttpOptions options_;
  CURL* curl_ = nullptr;
  curl_slist* aws_headers_ = nullptr;
};

}  // namespace

std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpOptions& options) {
  return std::make_unique<CurlHttpClient>(options);
}

Status HttpGetToString(HttpClient* http, const std::string& url, uint64_t max_bytes, std::string* body) {
  body->clear();
  return http->Get(
      url,
      [&](std::string_view data) {
        if (body->size() + data.size() > max_bytes) {
          return Status::DataLoss(url + " is larger than " + std::to_string(max_bytes) + " bytes");
        }
        body->append(data);
        return Status::OK();
      },
      [&](bool from_start) -> uint64_t {
        if (from_start) body->clear();
        return body->size();
      });
}

}  // namespace shardpack
