#include "storage/url.h"

#include <cctype>
#include <cstdio>

namespace shardpack {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Where the authority ("user:pass@host:port") of `url` lies: [*begin, *end). False without "://".
bool FindAuthority(const std::string& url, size_t* begin, size_t* end) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  *begin = scheme_end + 3;
  *end = url.find_first_of("/?#", *begin);
  if (*end == std::string::npos) *end = url.size();
  return true;
}

}  // namespace

std::string UriEncode(const std::string& text, bool keep_slash) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += char(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

std::string PercentDecode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out += char(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string UrlOrigin(const std::string& url) {
  size_t begin = 0, end = 0;
  if (!FindAuthority(url, &begin, &end)) return "";
  std::string scheme = url.substr(0, begin - 3);
  for (char& c : scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https") return "";
  std::string host = url.substr(begin, end - begin);
  if (const size_t at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  for (char& c : host) c = char(std::tolower(static_cast<unsigned char>(c)));
  // A port is what follows the last ':' outside an IPv6 literal's brackets.
  const size_t colon = host.rfind(':');
  const bool has_port = colon != std::string::npos && (host.find(']') == std::string::npos || colon > host.find(']'));
  if (!has_port) host += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + host;
}

bool SplitUrlCredentials(const std::string& url, std::string* user, std::string* password, std::string* bare) {
  size_t begin = 0, end = 0;
  *bare = url;
  if (!FindAuthority(url, &begin, &end)) return false;
  const size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string::npos || at < begin) return false;
  const std::string userinfo = url.substr(begin, at - begin);
  const size_t colon = userinfo.find(':');
  *user = PercentDecode(userinfo.substr(0, colon));
  *password = colon == std::string::npos ? "" : PercentDecode(userinfo.substr(colon + 1));
  *bare = url.substr(0, begin) + url.substr(at + 1);
  return true;
}

std::string RedactUrl(const std::string& url) {
  std::string user, password, bare;
  SplitUrlCredentials(url, &user, &password, &bare);
  return bare;
}

}  // namespace shardpack
