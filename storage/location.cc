#include "storage/location.h"

#include <cctype>

#include "shardpack/manifest.h"
#include "shardpack/shard_spec.h"
#include "storage/storage_backend.h"
#include "storage/url.h"

namespace shardpack {
namespace {

constexpr char kSchemeEnd[] = "://";
constexpr char kPipePrefix[] = "pipe:";

// RFC 3986's scheme: a letter, then letters, digits, '+', '-' or '.'. Set only when `text` starts
// with one followed by "://", so that a relative path holding "://" further in stays a path.
bool SplitScheme(const std::string& text, std::string* scheme) {
  const size_t end = text.find(kSchemeEnd);
  if (end == std::string::npos || end == 0 || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (size_t i = 0; i < end; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!(std::isalnum(c) || c == '+' || c == '-' || c == '.')) return false;
  }
  *scheme = text.substr(0, end);
  for (char& c : *scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
  return true;
}

}  // namespace

std::string UrlScheme(const std::string& url) {
  std::string scheme;
  return SplitScheme(url, &scheme) ? scheme : "";
}

std::string UrlPath(const std::string& url) {
  std::string scheme;
  return SplitScheme(url, &scheme) ? url.substr(scheme.size() + sizeof(kSchemeEnd) - 1) : "";
}

std::string LocationFrom(const std::string& dir, const std::string& text) {
  if (!UrlScheme(text).empty() || (!text.empty() && text[0] == '/')) return text;
  return JoinPath(dir, text);
}

bool MentionsUrl(const std::string& text) { return text.find(kSchemeEnd) != std::string::npos; }

Status ParseLocation(const std::string& text, Location* location) {
  *location = Location();
  location->text = text;
  location->shown = RedactUrl(text);
  if (text.empty()) return Status::InvalidArgument("an empty location: give a folder, a shard list or a URL");
  location->shard_list = LooksLikeShardSpec(text);
  // A dataset's manifest stands for the dataset: "out/manifest.json" is "out" (a user who looked
  // inside the folder gives what they saw).
  const std::string manifest = std::string("/") + kManifestFileName;
  if (!location->shard_list &&
      (text == kManifestFileName || (text.size() > manifest.size() &&
                                     text.compare(text.size() - manifest.size(), manifest.size(), manifest) == 0))) {
    const std::string folder = text == kManifestFileName ? "." : text.substr(0, text.size() - manifest.size());
    return ParseLocation(folder.empty() ? "/" : folder, location);
  }
  if (text.rfind(kPipePrefix, 0) == 0) {
    location->kind = Location::Kind::kPipe;
    location->command = text.substr(sizeof(kPipePrefix) - 1);
    return Status::OK();
  }
  std::string scheme;
  if (!SplitScheme(text, &scheme)) return Status::OK();  // a local path
  location->kind = Location::Kind::kRemote;
  location->scheme = scheme;
  location->backend = FindStorageBackend(scheme);
  if (location->backend == nullptr) {
    return Status::InvalidArgument(location->shown + ": no storage backend reads " + scheme + ":// locations (known: " +
                                   KnownStorageSchemes() + "; a local folder is given as a path)");
  }
  return location->backend->CheckLocation(*location);
}

}  // namespace shardpack
