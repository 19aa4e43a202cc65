// HttpClient: the seam through which remote datasets are read over HTTP(S), as Env is for files.
// Code that fetches takes one, so that tests can count or fail requests; the real one is libcurl's
// (NewCurlHttpClient), which reuses connections and does TLS.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

struct HttpOptions {
  // Attempts per request for what may pass (timeouts, connection errors, HTTP 429 and 5xx), with
  // exponential backoff and jitter between them. 404 and other 4xx fail at once: retrying cannot
  // help.
  int attempts = 4;
  double backoff_seconds = 0.2;  // before the second attempt; doubles each time
  double connect_timeout_seconds = 10;
  // A transfer slower than low_speed_bytes per second for low_speed_seconds is a timeout.
  uint64_t low_speed_bytes = 1024;
  double low_speed_seconds = 30;
  // AWS Signature V4 on every request (S3 and S3-compatible stores), done by libcurl; empty region:
  // unsigned.
  struct AwsSigning {
    std::string region;  // e.g. "us-east-1"
    std::string access_key_id, secret_access_key;
    std::string session_token;  // temporary credentials only
  } aws;
};

// A request other than a streamed GET (the S3 API's PUT, POST, HEAD, DELETE and listings): the body
// goes from memory, the answer comes back whole.
struct HttpRequest {
  std::string method;                // "GET", "PUT", "POST", "HEAD" or "DELETE"
  std::string url;                   // with its query in the order and encoding it is signed in
  std::vector<std::string> headers;  // "Name: value"
  std::string_view body;             // PUT and POST
};
struct HttpResponse {
  long status = 0;
  std::string body;  // at most max_body bytes
  // Response headers by lower-case name (the last of a repeated one).
  std::map<std::string, std::string> headers;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Before a retried attempt: `from_start` false lets the sink keep what it has and return its
  // length, and the next attempt asks only for the rest (an HTTP Range request); true (the server
  // would not serve a range) means the sink drops everything and returns 0.
  using Rewind = std::function<uint64_t(bool from_start)>;

  // GETs `url`, handing the body to `sink` as it arrives; a sink error aborts the transfer and is
  // returned. Retried attempts call `rewind` first. NotFound for HTTP 404, InvalidArgument for
  // other 4xx (with the status), IOError when the attempts run out; every message names the URL.
  virtual Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink,
                     const Rewind& rewind) = 0;

  // Sends `request` with the retry rule of Get, and fills *response from the answer that ended the
  // attempts. 2xx: OK. NotFound for 404, InvalidArgument for other 4xx, IOError when the attempts
  // run out; the message names the method and URL, and S3's error code when the body has one.
  virtual Status Send(const HttpRequest& request, uint64_t max_body, HttpResponse* response) = 0;
};

// The libcurl client. One per thread (a curl handle is not shared between threads).
std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpOptions& options = HttpOptions());

// GETs `url` into memory, refusing a body above max_bytes.
Status HttpGetToString(HttpClient* http, const std::string& url, uint64_t max_bytes, std::string* body);

}  // namespace shardpack
