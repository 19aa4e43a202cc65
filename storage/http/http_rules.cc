// The client's rules (storage/http/http_client.h): how long to wait before a retry, and which redirects
// to follow. Apart from the transfers, so that tests can check them by hand.
#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "storage/http/http_client.h"
#include "storage/location.h"
#include "storage/url.h"

namespace shardpack {

double RetryDelaySeconds(const HttpOptions& options, int attempts_made, double retry_after_seconds,
                         double unit_random) {
  const double cap = std::max(0.0, options.max_backoff_seconds);
  // A server that says when to come back is believed, up to the cap: a Retry-After of an hour
  // must not park a training job for an hour.
  if (retry_after_seconds >= 0) return std::min(retry_after_seconds, cap);
  const double backoff = std::min(cap, options.backoff_seconds * std::ldexp(1.0, std::min(attempts_made - 1, 60)));
  return unit_random * backoff;
}

double ParseRetryAfter(const std::string& value, int64_t now) {
  if (value.empty()) return -1;
  if (value.find_first_not_of("0123456789") == std::string::npos) {
    return value.size() > 9 ? 1e9 : double(std::strtoll(value.c_str(), nullptr, 10));
  }
  const time_t when = curl_getdate(value.c_str(), nullptr);  // an HTTP date
  if (when < 0) return -1;
  return std::max<double>(0, double(when - now));
}

Status CheckRedirect(const std::string& from, long code, const std::string& target, int hops, int max_redirects) {
  const std::string said = "GET " + RedactUrl(from) + " answered HTTP " + std::to_string(code);
  if (target.empty()) return Status::IOError(said + " without a Location to follow");
  if (hops >= max_redirects) {
    return Status::InvalidArgument(said + " to " + RedactUrl(target) + ": more than " + std::to_string(max_redirects) +
                                   " redirects (a loop?); refused");
  }
  const std::string origin = UrlOrigin(target);
  if (origin.empty()) return Status::InvalidArgument(said + " to " + RedactUrl(target) + ", not http(s): refused");
  if (UrlScheme(from) == "https" && UrlScheme(target) == "http") {
    return Status::InvalidArgument(said + " to " + RedactUrl(target) +
                                   ": a redirect from https to http is refused (it would go unencrypted)");
  }
  return Status::OK();
}

}  // namespace shardpack
