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
  // Attempts per request for what may pass (timeouts, connection errors, HTTP 429 and 5xx, S3's
  // SlowDown). 404 and other 4xx fail at once: retrying cannot help. Between attempts: full jitter
  // (a random wait up to the backoff), the backoff doubling from backoff_seconds up to
  // max_backoff_seconds; a server's Retry-After is waited instead, up to that cap. No retry starts
  // once retry_seconds have passed since the first attempt began. The defaults ride out minutes of
  // throttling (hundreds of job-array tasks writing to one bucket) and give up on a dead server
  // within them: at most 9 waits of 0.25 s doubling to 20 s, about 36 s on average, 72 s at most.
  int attempts = 10;
  double backoff_seconds = 0.25;
  double max_backoff_seconds = 20;
  double retry_seconds = 300;
  double connect_timeout_seconds = 10;
  // A transfer slower than low_speed_bytes per second for low_speed_seconds is a timeout (libcurl
  // counts whole seconds: below 1 counts as 1, never as "off").
  uint64_t low_speed_bytes = 1024;
  double low_speed_seconds = 30;
  // GET follows at most this many redirects (301, 302, 303, 307, 308); never from https to http, and
  // never with credentials (AWS signature, session token, user:password) to another host. Other
  // requests do not follow: a redirect is an error naming the URL.
  int max_redirects = 5;
  // HTTP basic authentication (a location's user:password@, taken out of the URL where it enters so
  // that no message prints it); sent only to the request's own host, as AWS signatures are.
  std::string user, password;
  // A GET body larger than this is stopped at once (a server streaming without end); downloads
  // whose size is known hold it to that size instead.
  uint64_t max_body_bytes = uint64_t(64) << 30;
  // AWS Signature V4 on every request (S3 and S3-compatible stores), done by libcurl; empty region:
  // unsigned.
  struct AwsSigning {
    std::string region;  // e.g. "us-east-1"
    std::string access_key_id, secret_access_key;
    std::string session_token;  // temporary credentials only
  } aws;
};

// The wait before the next attempt, after `attempts_made` attempts (1 or more): full jitter over
// the capped exponential backoff (`unit_random` in [0, 1) picks the point), or a server's
// Retry-After (`retry_after_seconds` >= 0) up to max_backoff_seconds.
double RetryDelaySeconds(const HttpOptions& options, int attempts_made, double retry_after_seconds, double unit_random);

// Whether a GET of `from` that answered redirect `code` (3xx) to `target` (absolute; empty: no
// Location) may be followed, after `hops` redirects: OK, or the error that names both.
Status CheckRedirect(const std::string& from, long code, const std::string& target, int hops, int max_redirects);

// A Retry-After header's value in seconds from `now`: delta-seconds or an HTTP date; -1 when it is
// neither.
double ParseRetryAfter(const std::string& value, int64_t now);

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
  // returned. Retried attempts call `rewind` first. Redirects are followed as HttpOptions says; the
  // sink sees only the final answer's body. NotFound for HTTP 404, InvalidArgument for other 4xx
  // (with the status) and for a redirect refused, IOError when the attempts run out or the body
  // passes max_body_bytes; every message names the URL (without credentials).
  virtual Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink,
                     const Rewind& rewind) = 0;

  // Sends `request` with the retry rule of Get, and fills *response from the answer that ended the
  // attempts. 2xx: OK. A redirect (3xx) is not followed: InvalidArgument naming the URL and where it
  // points. NotFound for 404, InvalidArgument for other 4xx, IOError when the attempts run out; the
  // message names the method and URL, and S3's error code when the body has one.
  virtual Status Send(const HttpRequest& request, uint64_t max_body, HttpResponse* response) = 0;
};

// The libcurl client. One per thread (a curl handle is not shared between threads).
std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpOptions& options = HttpOptions());

// GETs `url` into memory, refusing a body above max_bytes.
Status HttpGetToString(HttpClient* http, const std::string& url, uint64_t max_bytes, std::string* body);

}  // namespace shardpack
