// Fuzz target: URLs and names from outside, as the remote paths parse them: s3:// locations (the
// bucket becomes part of the host signed requests go to), user:password@ authorities, redirect
// Locations a server sends, and the names a manifest lists. The input is split at the first NUL
// into a "from" URL and a "to" text. Whatever they hold: a bucket taken is a valid one, the key
// encoding decodes back to the key, a URL without credentials has no '@' left in its authority,
// a redirect followed is to http(s) and never from https down to http, and a manifest name taken
// stays inside the dataset.
#include <cstdint>
#include <string>

#include "storage/http/http_client.h"
#include "storage/remote_dataset.h"
#include "storage/s3/s3_object_store.h"
#include "storage/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string from = input.substr(0, nul), to = nul == std::string::npos ? "" : input.substr(nul + 1);

  shardpack::S3Location location;
  if (shardpack::ParseS3Location("s3://" + from, shardpack::RemoteOptions::S3(), &location).ok()) {
    const std::string bucket = from.substr(0, from.find('/'));
    if (!shardpack::CheckS3BucketName(bucket, from).ok()) __builtin_trap();
    for (const char c : bucket) {
      if (c == '/' || c == '?' || c == '#' || c == '@' || c == ':') __builtin_trap();
    }
  }
  if (shardpack::PercentDecode(shardpack::UriEncode(to, true)) != to) __builtin_trap();
  if (shardpack::UriEncode(to, false).find_first_of("/?#@ +") != std::string::npos) __builtin_trap();

  std::string user, password, bare;
  shardpack::SplitUrlCredentials(from, &user, &password, &bare);
  const size_t scheme = bare.find("://");
  if (scheme != std::string::npos) {
    const std::string authority = bare.substr(scheme + 3, bare.find_first_of("/?#", scheme + 3) - (scheme + 3));
    if (authority.find('@') != std::string::npos) __builtin_trap();
  }
  (void)shardpack::UrlOrigin(from);

  if (shardpack::CheckRedirect(from, 302, to, 0, 5).ok()) {
    const std::string origin = shardpack::UrlOrigin(to);
    if (origin.empty()) __builtin_trap();
    if (shardpack::UrlOrigin(from).rfind("https:", 0) == 0 && origin.rfind("http:", 0) == 0) __builtin_trap();
  }

  if (shardpack::CheckDatasetFileName(to).ok()) {
    const std::string decoded = shardpack::PercentDecode(to);
    if (decoded.empty() || decoded[0] == '/' || decoded.find("..") != std::string::npos) __builtin_trap();
  }
  return 0;
}
