// The libcurl HttpClient. libcurl does HTTP, TLS and connection reuse; this file adds the retry
// rule (which failures may pass, capped backoff with jitter, Retry-After), the redirect rule
// (followed by hand, so that credentials go to their own host only) and the messages.
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include "storage/http/http_client.h"
#include "storage/url.h"

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
  const std::string* url;
  uint64_t received;  // bytes of the body from its first byte: an attempt's offset plus what came
  uint64_t max_bytes;
  Status sink_status;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  Transfer* t = static_cast<Transfer*>(user);
  long code = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
  // An error page or a redirect's page, not the object: dropped (a redirect is followed by hand).
  if (code < 200 || code >= 300) return size * count;
  t->received += size * count;
  if (t->received > t->max_bytes) {
    t->sink_status = Status::IOError("GET " + RedactUrl(*t->url) + ": the body passes " + std::to_string(t->max_bytes) +
                                     " bytes, the most a download may take: stopped (set SHARDPACK_HTTP_MAX_BYTES "
                                     "for larger files)");
    return 0;
  }
  t->sink_status = (*t->sink)(std::string_view(data, size * count));
  return t->sink_status.ok() ? size * count : 0;  // 0 makes libcurl abort the transfer
}

// Send's answer as it arrives: the body (up to a limit) and the headers.
struct Reply {
  HttpResponse* response;
  uint64_t max_body;
  Status status;
  CURL* curl;
  std::string what;  // "GET <url>", for the message
};

// An error page's first bytes are kept (S3's error code is in them); the rest is dropped.
constexpr size_t kErrorBodyBytes = 64 << 10;

// The body of an answer as it arrives. max_body bounds a successful answer only: an error page (a
// 503's HTML, say) is the status's to judge, retried or refused under the rules, whatever its length;
// it was taken for a damaged sample when it passed the bound of a range read. A successful answer
// over the bound is the server's error (IOError naming the URL), never the data's.
size_t WriteReply(char* data, size_t size, size_t count, void* user) {
  Reply* r = static_cast<Reply*>(user);
  long code = 0;
  curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code >= 300) {
    std::string& body = r->response->body;
    body.append(data, std::min(size * count, kErrorBodyBytes - std::min(kErrorBodyBytes, body.size())));
    return size * count;
  }
  if (r->response->body.size() + size * count > r->max_body) {
    r->status = Status::IOError(r->what + " answered HTTP " + std::to_string(code) + " with more than the " +
                                std::to_string(r->max_body) + " bytes asked for");
    return 0;
  }
  r->response->body.append(data, size * count);
  return size * count;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  Reply* r = static_cast<Reply*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a status line: a new answer (after a redirect or a 100)
    r->response->headers.clear();
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = line.substr(0, colon), value = line.substr(colon + 1);
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  const size_t first = value.find_first_not_of(" \t"), last = value.find_last_not_of(" \t\r\n");
  r->response->headers[name] = first == std::string::npos ? "" : value.substr(first, last - first + 1);
  return size * count;
}

// A PUT's body, handed to libcurl in the pieces it asks for.
struct BodySource {
  std::string_view body;
  size_t sent;
};

size_t ReadBody(char* buffer, size_t size, size_t count, void* user) {
  BodySource* source = static_cast<BodySource*>(user);
  const size_t n = std::min(size * count, source->body.size() - source->sent);
  std::memcpy(buffer, source->body.data() + source->sent, n);
  source->sent += n;
  return n;
}

// "Code: Message" of an S3 error body (<Error><Code>...</Code><Message>...</Message></Error>), or
// nothing.
std::string S3ErrorOf(const std::string& body) {
  const auto element = [&](const std::string& name) {
    const size_t open = body.find("<" + name + ">");
    if (open == std::string::npos) return std::string();
    const size_t start = open + name.size() + 2, close = body.find("</" + name + ">", start);
    return close == std::string::npos ? std::string() : body.substr(start, close - start);
  };
  const std::string code = element("Code"), message = element("Message");
  if (code.empty()) return "";
  return message.empty() ? code : code + ": " + message;
}

bool IsRedirect(long code) { return code == 301 || code == 302 || code == 303 || code == 307 || code == 308; }

// Where a redirect points (an absolute URL), or nothing.
std::string RedirectTarget(CURL* curl) {
  char* target = nullptr;
  curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &target);
  return target == nullptr ? "" : target;
}

class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(const HttpOptions& options) : options_(options) {
    InitCurlOnce();
    curl_ = curl_easy_init();
    if (!options_.aws.region.empty()) {
      // S3 wants the body's hash in a header of every SigV4 request; libcurl 7.88 neither sends it
      // nor hashes a body other than POSTFIELDS, but signs with the value this header gives.
      aws_headers_ = curl_slist_append(aws_headers_, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    }
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
    if (curl_ == nullptr) return Status::IOError("cannot start libcurl for " + RedactUrl(url));
    uint64_t offset = 0;      // bytes the sink holds already: the next attempt asks for the rest
    bool from_start = false;  // the server did not honour a range: start over
    return WithRetries(
        [&](bool* retry, double* retry_after) {
          return AttemptGet(url, sink, offset, retry, retry_after, &from_start);
        },
        [&] { offset = rewind ? rewind(from_start) : 0; });
  }

  Status Send(const HttpRequest& request, uint64_t max_body, HttpResponse* response) override {
    if (curl_ == nullptr) return Status::IOError("cannot start libcurl for " + RedactUrl(request.url));
    return WithRetries(
        [&](bool* retry, double* retry_after) { return AttemptSend(request, max_body, response, retry, retry_after); },
        [] {});
  }

 private:
  // Runs `attempt` until it passes, fails for good (*retry false), the attempts run out or the
  // time for retries is spent, waiting between attempts (RetryDelaySeconds) and calling
  // `before_retry` before each one after the first.
  template <typename Attempt, typename BeforeRetry>
  Status WithRetries(const Attempt& attempt, const BeforeRetry& before_retry) {
    using Clock = std::chrono::steady_clock;
    std::mt19937_64 random(std::random_device{}());
    const Clock::time_point start = Clock::now();
    Status last;
    int n = 1;
    bool out_of_time = false;
    for (;; ++n) {
      bool retry = false;
      double retry_after = -1;
      last = attempt(&retry, &retry_after);
      if (last.ok() || !retry) return last;
      if (n >= options_.attempts) break;
      const double wait =
          RetryDelaySeconds(options_, n, retry_after, std::uniform_real_distribution<double>(0, 1)(random));
      const double spent = std::chrono::duration<double>(Clock::now() - start).count();
      if (spent + wait > options_.retry_seconds) {
        out_of_time = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      before_retry();
    }
    char budget[64];
    std::snprintf(budget, sizeof(budget), "%g", options_.retry_seconds);
    return Status::IOError(last.message() + " (gave up after " + std::to_string(n) +
                           (n == 1 ? " attempt" : " attempts") +
                           (out_of_time ? std::string(": the next would start after the ") + budget +
                                              " s allowed for retries (SHARDPACK_HTTP_RETRY_SECONDS)"
                                        : std::string()) +
                           ")");
  }

  // What every request shares: the handle reset (it keeps its connections), timeouts, protocols,
  // and, when `credentials`, AWS signing and basic authentication. `headers` is handed to libcurl
  // and must live until the transfer ends.
  void SetUp(const std::string& url, curl_slist* headers, bool credentials) {
    curl_easy_reset(curl_);
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, long(options_.connect_timeout_seconds * 1000));
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, long(options_.low_speed_bytes));
    // Whole seconds, at least 1: libcurl takes 0 as "no stall detection".
    curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, std::max(1L, long(std::ceil(options_.low_speed_seconds))));
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 0L);  // by hand: AttemptGet
    // Shards are large: fewer, larger reads from the socket and calls into the sink (the default
    // is 16 KiB) take a fast link's bytes at a fraction of the CPU.
    curl_easy_setopt(curl_, CURLOPT_BUFFERSIZE, 512L * 1024);
    if (credentials && !options_.aws.region.empty()) {
      // libcurl computes the signature (and sends x-amz-date) itself. It signs the URL's path and
      // query as they are written: callers encode paths with UriEncode and write queries in
      // canonical form (sorted, encoded, "name=value"). Bodies go as UNSIGNED-PAYLOAD
      // (aws_headers_), as the AWS SDKs send them over HTTPS.
      const std::string provider = "aws:amz:" + options_.aws.region + ":s3";
      curl_easy_setopt(curl_, CURLOPT_AWS_SIGV4, provider.c_str());
      curl_easy_setopt(curl_, CURLOPT_USERNAME, options_.aws.access_key_id.c_str());
      curl_easy_setopt(curl_, CURLOPT_PASSWORD, options_.aws.secret_access_key.c_str());
    } else if (credentials && !options_.user.empty()) {
      curl_easy_setopt(curl_, CURLOPT_USERNAME, options_.user.c_str());
      curl_easy_setopt(curl_, CURLOPT_PASSWORD, options_.password.c_str());
    }
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
  }

  // One GET, of the body from `offset` on, following redirects. *retry: the failure is one that
  // another attempt may not meet; *from_start: that attempt must ask for the whole body.
  Status AttemptGet(const std::string& url, const std::function<Status(std::string_view)>& sink, uint64_t offset,
                    bool* retry, double* retry_after, bool* from_start) {
    *retry = false;
    *from_start = false;
    const std::string origin = UrlOrigin(url);
    std::string at = url;
    for (int hops = 0;; ++hops) {
      Transfer transfer{curl_, &sink, &at, offset, options_.max_body_bytes, Status::OK()};
      HttpResponse answer;
      Reply headers{&answer, 0, Status::OK(), curl_, "GET " + RedactUrl(url)};  // (headers only)
      // Credentials, signature and session token go to the URL's own host only: a redirect
      // elsewhere is followed without them (what it serves is still held to its checksum).
      const bool own_host = UrlOrigin(at) == origin;
      SetUp(at, own_host ? aws_headers_ : nullptr, own_host);
      curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, WriteBody);
      curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &transfer);
      curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, WriteHeader);
      curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &headers);
      // With an offset libcurl sends "Range: bytes=offset-" and fails (CURLE_RANGE_ERROR) unless
      // the answer is that range, so the sink never gets a whole body appended to a part.
      curl_easy_setopt(curl_, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset));
      const CURLcode rc = curl_easy_perform(curl_);
      long code = 0;
      curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
      if (!transfer.sink_status.ok()) return transfer.sink_status;
      if (rc == CURLE_RANGE_ERROR) {
        *retry = *from_start = true;
        return Status::IOError("GET " + RedactUrl(at) + " from byte " + std::to_string(offset) +
                               ": the server does not serve ranges");
      }
      if (rc == CURLE_OK && IsRedirect(code)) {
        const std::string target = RedirectTarget(curl_);
        SHARDPACK_RETURN_IF_ERROR(CheckRedirect(at, code, target, hops, options_.max_redirects));
        at = target;
        continue;
      }
      *retry_after = RetryAfterOf(answer);
      return Outcome("GET", at, rc, code, "", retry);
    }
  }

  // One request of Send. A GET or HEAD that no signature covers (a dataset's range reads over
  // plain HTTP) follows redirects by Get's rules (CheckRedirect: at most max_redirects, never to
  // another scheme; credentials to the URL's own host only): a range read of a moved file failed
  // with a message about AWS settings. A signed or other request is not followed: a PUT or POST
  // would be sent again elsewhere, and an S3 call that redirects is misaddressed, not moved.
  Status AttemptSend(const HttpRequest& request, uint64_t max_body, HttpResponse* response, bool* retry,
                     double* retry_after) {
    const bool follow = aws_headers_ == nullptr && (request.method == "GET" || request.method == "HEAD");
    const std::string origin = UrlOrigin(request.url);
    std::string at = request.url;
    for (int hops = 0;; ++hops) {
      *response = HttpResponse();
      curl_slist* headers = nullptr;
      for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
      for (const curl_slist* h = aws_headers_; h != nullptr; h = h->next) headers = curl_slist_append(headers, h->data);
      SetUp(at, headers, /*credentials=*/UrlOrigin(at) == origin);
      Reply reply{response, max_body, Status::OK(), curl_, request.method + " " + RedactUrl(at)};
      curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, WriteReply);
      curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply);
      curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, WriteHeader);
      curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &reply);
      BodySource source{request.body, 0};
      if (request.method == "HEAD") {
        curl_easy_setopt(curl_, CURLOPT_NOBODY, 1L);
      } else if (request.method == "PUT") {
        curl_easy_setopt(curl_, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(curl_, CURLOPT_READFUNCTION, ReadBody);
        curl_easy_setopt(curl_, CURLOPT_READDATA, &source);
        curl_easy_setopt(curl_, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.size()));
      } else if (request.method == "POST") {
        curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.size()));
        curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, request.body.data());
      } else if (request.method != "GET") {
        curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      }
      const CURLcode rc = curl_easy_perform(curl_);
      curl_slist_free_all(headers);
      curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &response->status);
      *retry = false;
      if (!reply.status.ok()) return reply.status;
      if (rc == CURLE_OK && follow && IsRedirect(response->status)) {
        const std::string target = RedirectTarget(curl_);
        SHARDPACK_RETURN_IF_ERROR(CheckRedirect(at, response->status, target, hops, options_.max_redirects));
        at = target;
        continue;
      }
      if (rc == CURLE_OK && response->status >= 300 && response->status < 400) {
        const std::string target = RedirectTarget(curl_);
        const std::string detail = S3ErrorOf(response->body);
        return Status::InvalidArgument(
            request.method + " " + RedactUrl(at) + " answered HTTP " + std::to_string(response->status) +
            (target.empty() ? "" : " to " + RedactUrl(target)) + (detail.empty() ? "" : " (" + detail + ")") +
            ": a redirect is not followed for this request; check the URL or endpoint "
            "(AWS_ENDPOINT_URL, AWS_REGION)");
      }
      *retry_after = RetryAfterOf(*response);
      return Outcome(request.method, at, rc, response->status, S3ErrorOf(response->body), retry);
    }
  }

  static double RetryAfterOf(const HttpResponse& answer) {
    const auto it = answer.headers.find("retry-after");
    return it == answer.headers.end() ? -1 : ParseRetryAfter(it->second, int64_t(std::time(nullptr)));
  }

  // The status of a finished attempt: libcurl's result `rc`, the HTTP `code`, and what the server
  // said of an error (`detail`, may be empty). *retry: another attempt may pass.
  static Status Outcome(const std::string& method, const std::string& raw_url, CURLcode rc, long code,
                        const std::string& detail, bool* retry) {
    *retry = false;
    const std::string url = RedactUrl(raw_url);
    if (rc != CURLE_OK) {
      // Timeouts, refused or reset connections, bodies cut short: the network's, worth another try.
      *retry = rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR ||
               rc == CURLE_SEND_ERROR || rc == CURLE_PARTIAL_FILE || rc == CURLE_GOT_NOTHING;
      return Status::IOError("cannot " + method + " " + url + ": " + curl_easy_strerror(rc));
    }
    const std::string said = detail.empty() ? "" : " (" + detail + ")";
    if (code == 404) return Status::NotFound(url + " does not exist (HTTP 404)" + said);
    if (code == 429 || code >= 500) {
      *retry = true;
      return Status::IOError(method + " " + url + " answered HTTP " + std::to_string(code) + said);
    }
    if (code >= 300) {
      return Status::InvalidArgument(
          method + " " + url + " answered HTTP " + std::to_string(code) +
          (code == 401 || code == 403 ? " (access denied: check the URL and credentials)" : said));
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
