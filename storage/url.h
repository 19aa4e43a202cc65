// URLs as the remote paths handle them: one encoder for every path shardpack builds (S3 keys and
// manifest names alike, so that what is requested is what is signed), the origin a credential
// belongs to, and URLs made fit to print.
#pragma once

#include <string>

namespace shardpack {

// RFC 3986 / AWS SigV4 encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper case); '/' kept
// when `keep_slash` (paths), encoded otherwise (query values).
std::string UriEncode(const std::string& text, bool keep_slash);

// `text` with each %XX decoded (a '%' not followed by two hex digits stays as it is).
std::string PercentDecode(const std::string& text);

// "scheme://host:port" of an http(s) URL, lower case, the port explicit (80, 443 by default);
// empty when `url` is not one.
std::string UrlOrigin(const std::string& url);

// `url` without the user name and password of its authority ("https://u:p@host/x" -> "https://host/x").
std::string RedactUrl(const std::string& url);

// The user name and password of `url`'s authority (percent-decoded), and the URL without them.
// False when it has none.
bool SplitUrlCredentials(const std::string& url, std::string* user, std::string* password, std::string* bare);

}  // namespace shardpack
