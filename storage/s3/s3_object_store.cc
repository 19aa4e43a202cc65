#include "storage/s3/s3_object_store.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "storage/location.h"
#include "storage/url.h"

namespace shardpack {
namespace {

// The text of XML's five entities decoded (S3 escapes them in keys and ETags).
std::string XmlText(std::string text) {
  static const std::pair<const char*, char> kEntities[] = {
      {"&quot;", '"'}, {"&apos;", '\''}, {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}};
  for (const auto& [entity, c] : kEntities) {
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, std::strlen(entity), 1, c);
    }
  }
  return text;
}

// The text of the first <name> element in xml[from, to), or nothing.
std::string Element(const std::string& xml, const std::string& name, size_t from = 0, size_t to = std::string::npos) {
  const size_t open = xml.find("<" + name + ">", from);
  if (open == std::string::npos || open >= to) return "";
  const size_t start = open + name.size() + 2, close = xml.find("</" + name + ">", start);
  return close == std::string::npos || close > to ? "" : XmlText(xml.substr(start, close - start));
}

// Calls `each(begin, end)` for the span of every <name>...</name> element of xml.
template <typename Each>
void ForEachElement(const std::string& xml, const std::string& name, const Each& each) {
  const std::string open = "<" + name + ">", close = "</" + name + ">";
  for (size_t at = xml.find(open); at != std::string::npos; at = xml.find(open, at + 1)) {
    const size_t end = xml.find(close, at);
    if (end == std::string::npos) return;
    each(at, end);
  }
}

constexpr uint64_t kMaxReplyBytes = 16u << 20;  // listings and error documents

}  // namespace

Status CheckS3BucketName(const std::string& bucket, const std::string& s3_url) {
  const auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(s3_url + ": '" + bucket + "' is not a valid S3 bucket name (" + why +
                                   "; see AWS's bucket naming rules)");
  };
  if (bucket.size() < 3 || bucket.size() > 63) return refuse("it must have 3 to 63 characters");
  for (const char c : bucket) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
          c == '-')) {
      return refuse("only lower-case letters, digits, '.' and '-' are allowed");
    }
  }
  if (!std::isalnum(static_cast<unsigned char>(bucket.front())) ||
      !std::isalnum(static_cast<unsigned char>(bucket.back()))) {
    return refuse("it must begin and end with a letter or digit");
  }
  if (bucket.find("..") != std::string::npos) return refuse("two '.' may not be adjacent");
  if (bucket.find_first_not_of("0123456789.") == std::string::npos) return refuse("it may not be an IP address");
  if (bucket.rfind("xn--", 0) == 0 || bucket.rfind("sthree-", 0) == 0) return refuse("a reserved prefix");
  for (const std::string suffix : {"-s3alias", "--ol-s3"}) {
    if (bucket.size() > suffix.size() && bucket.compare(bucket.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return refuse("a reserved suffix");
    }
  }
  return Status::OK();
}

Status ParseS3Location(const std::string& s3_url, const RemoteOptions::S3& settings, S3Location* location) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(s3_url, &parsed));
  if (parsed.scheme != "s3") return Status::InvalidArgument(s3_url + " is not an s3:// URL");
  const std::string rest = UrlPath(s3_url);
  const size_t slash = rest.find('/');
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  location->prefix = prefix;
  const std::string bucket = rest.substr(0, slash);
  if (!settings.endpoint_url.empty()) {  // S3-compatible stores: path-style addressing
    std::string e = settings.endpoint_url;
    while (!e.empty() && e.back() == '/') e.pop_back();
    location->bucket_url = e + "/" + bucket;
    return Status::OK();
  }
  const std::string region = settings.region.empty() ? "us-east-1" : settings.region;
  location->bucket_url = settings.path_style ? "https://s3." + region + ".amazonaws.com/" + bucket
                                             : "https://" + bucket + ".s3." + region + ".amazonaws.com";
  return Status::OK();
}

Status CheckS3Location(const std::string& s3_url) {
  const std::string rest = UrlPath(s3_url);
  const std::string bucket = rest.substr(0, rest.find('/'));
  if (bucket.empty()) return Status::InvalidArgument(s3_url + ": no bucket (s3://BUCKET/PREFIX)");
  // The bucket becomes part of a host name or path that signed requests go to: anything but a
  // valid bucket name ("evil.example?x") could send them, and the session token, elsewhere.
  return CheckS3BucketName(bucket, s3_url);
}

std::string S3KeyUrl(const S3Location& location, const std::string& key) {
  return key.empty() ? location.bucket_url : location.bucket_url + "/" + UriEncode(key, /*keep_slash=*/true);
}

std::string S3ObjectStore::Url(const std::string& name) const {
  return S3KeyUrl(location_, location_.prefix.empty() ? name : location_.prefix + "/" + name);
}

Status S3ObjectStore::Send(const std::string& method, const std::string& url, std::vector<std::string> headers,
                           std::string_view body, HttpResponse* response) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  request.headers = std::move(headers);
  request.body = body;
  return http_->Send(request, kMaxReplyBytes, response);
}

Status S3ObjectStore::Put(const std::string& name, std::string_view data, const std::string& xxh64) {
  HttpResponse response;
  return Send("PUT", Url(name), {"x-amz-meta-xxh64: " + xxh64}, data, &response);
}

Status S3ObjectStore::StartMultipart(const std::string& name, const std::string& xxh64, std::string* upload_id) {
  HttpResponse response;
  // "uploads=", not "uploads": the query as its canonical form has it (HttpRequest::url).
  SHARDPACK_RETURN_IF_ERROR(Send("POST", Url(name) + "?uploads=", {"x-amz-meta-xxh64: " + xxh64}, "", &response));
  *upload_id = Element(response.body, "UploadId");
  if (upload_id->empty()) {
    return Status::IOError("POST " + Url(name) +
                           "?uploads answered without an UploadId: " + response.body.substr(0, 200));
  }
  return Status::OK();
}

Status S3ObjectStore::PutPart(const std::string& name, const std::string& upload_id, int part_number,
                              std::string_view data, std::string* etag) {
  HttpResponse response;
  const std::string url =
      Url(name) + "?partNumber=" + std::to_string(part_number) + "&uploadId=" + UriEncode(upload_id, false);
  SHARDPACK_RETURN_IF_ERROR(Send("PUT", url, {}, data, &response));
  const auto it = response.headers.find("etag");
  if (it == response.headers.end() || it->second.empty()) {
    return Status::IOError("PUT " + url + " answered without an ETag");
  }
  *etag = it->second;
  return Status::OK();
}

Status S3ObjectStore::CompleteMultipart(const std::string& name, const std::string& upload_id,
                                        const std::vector<std::string>& etags) {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] + "</ETag></Part>";
  }
  xml += "</CompleteMultipartUpload>";
  HttpResponse response;
  const std::string url = Url(name) + "?uploadId=" + UriEncode(upload_id, false);
  SHARDPACK_RETURN_IF_ERROR(Send("POST", url, {"Content-Type: application/xml"}, xml, &response));
  // S3 may answer 200 and still fail, with an <Error> document in the body.
  if (response.body.find("<Error>") != std::string::npos) {
    return Status::IOError("POST " + url + " failed: " + Element(response.body, "Code") + ": " +
                           Element(response.body, "Message"));
  }
  return Status::OK();
}

Status S3ObjectStore::AbortMultipart(const std::string& name, const std::string& upload_id) {
  HttpResponse response;
  return Send("DELETE", Url(name) + "?uploadId=" + UriEncode(upload_id, false), {}, "", &response);
}

Status S3ObjectStore::ListMultipartUploads(std::vector<std::pair<std::string, std::string>>* uploads) {
  uploads->clear();
  const std::string prefix = location_.prefix.empty() ? "" : location_.prefix + "/";
  std::string key_marker, id_marker;
  std::set<std::string> markers_seen;
  while (true) {
    // The parameters in canonical (sorted) order, as they are signed.
    std::string url = location_.bucket_url + "?";
    if (!key_marker.empty()) url += "key-marker=" + UriEncode(key_marker, false) + "&";
    url += "prefix=" + UriEncode(prefix, false) + "&";
    if (!id_marker.empty()) url += "upload-id-marker=" + UriEncode(id_marker, false) + "&";
    url += "uploads=";
    HttpResponse response;
    SHARDPACK_RETURN_IF_ERROR(Send("GET", url, {}, "", &response));
    const std::string& xml = response.body;
    if (xml.find("<ListMultipartUploadsResult") == std::string::npos) {
      return Status::IOError("GET " + url + " answered no list of uploads: " + xml.substr(0, 200));
    }
    ForEachElement(xml, "Upload", [&](size_t begin, size_t end) {
      const std::string key = Element(xml, "Key", begin, end), id = Element(xml, "UploadId", begin, end);
      // Only objects directly under the prefix, whatever the store sends.
      if (id.empty() || key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return;
      const std::string name = key.substr(prefix.size());
      if (name.find('/') == std::string::npos) uploads->push_back({name, id});
    });
    if (Element(xml, "IsTruncated") != "true") return Status::OK();
    key_marker = Element(xml, "NextKeyMarker");
    id_marker = Element(xml, "NextUploadIdMarker");
    // A store that hands back a marker it gave before would be listed forever: the loop must end.
    if (key_marker.empty() || !markers_seen.insert(key_marker + "\n" + id_marker).second) {
      return Status::IOError("GET " + url +
                             ": a truncated list of uploads without a new marker; the store lists in "
                             "circles");
    }
  }
}

Status S3ObjectStore::Head(const std::string& name, S3ObjectInfo* info) {
  *info = S3ObjectInfo();
  HttpResponse response;
  const Status s = Send("HEAD", Url(name), {}, "", &response);
  if (s.code() == Status::Code::kNotFound) return Status::OK();
  SHARDPACK_RETURN_IF_ERROR(s);
  info->exists = true;
  const auto length = response.headers.find("content-length");
  if (length != response.headers.end()) info->size = std::strtoull(length->second.c_str(), nullptr, 10);
  const auto xxh64 = response.headers.find("x-amz-meta-xxh64");
  if (xxh64 != response.headers.end()) info->xxh64 = xxh64->second;
  return Status::OK();
}

Status S3ObjectStore::Get(const std::string& name, uint64_t max_bytes, std::string* contents) {
  return HttpGetToString(http_, Url(name), max_bytes, contents);
}

Status S3ObjectStore::Delete(const std::string& name) {
  HttpResponse response;
  const Status s = Send("DELETE", Url(name), {}, "", &response);
  return s.code() == Status::Code::kNotFound ? Status::OK() : s;
}

Status S3ObjectStore::List(S3Listing* listing) {
  *listing = S3Listing();
  const std::string prefix = location_.prefix.empty() ? "" : location_.prefix + "/";
  std::string token;
  std::set<std::string> tokens_seen;
  while (true) {
    // ListObjectsV2, its parameters in canonical (sorted) order.
    std::string url = location_.bucket_url + "?";
    if (!token.empty()) url += "continuation-token=" + UriEncode(token, false) + "&";
    url += "delimiter=%2F&list-type=2&prefix=" + UriEncode(prefix, false);
    HttpResponse response;
    SHARDPACK_RETURN_IF_ERROR(Send("GET", url, {}, "", &response));
    const std::string& xml = response.body;
    if (xml.find("<ListBucketResult") == std::string::npos) {
      return Status::IOError("GET " + url + " answered no listing: " + xml.substr(0, 200));
    }
    // Only names directly under the prefix are taken: an entry of another prefix, or one deeper
    // down, is not this folder's, whatever the store sends.
    const auto name_under_prefix = [&](const std::string& key, std::string* name) {
      if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return false;
      *name = key.substr(prefix.size());
      return name->find('/') == std::string::npos;
    };
    ForEachElement(xml, "Contents", [&](size_t begin, size_t end) {
      std::string name;
      if (name_under_prefix(Element(xml, "Key", begin, end), &name)) {
        listing->files[name] = std::strtoull(Element(xml, "Size", begin, end).c_str(), nullptr, 10);
      }
    });
    ForEachElement(xml, "CommonPrefixes", [&](size_t begin, size_t end) {
      std::string folder = Element(xml, "Prefix", begin, end), name;
      if (!folder.empty() && folder.back() == '/') folder.pop_back();
      if (name_under_prefix(folder, &name)) listing->folders.insert(name);
    });
    if (Element(xml, "IsTruncated") != "true") return Status::OK();
    const std::string next = Element(xml, "NextContinuationToken");
    if (next.empty()) return Status::IOError("GET " + url + ": a truncated listing without a continuation token");
    // A store that hands back a token it gave before would be listed forever: the loop must end.
    if (!tokens_seen.insert(next).second) {
      return Status::IOError("GET " + url + ": the listing gives back a continuation token it gave before (" + next +
                             "); the store lists in circles");
    }
    token = next;
  }
}

}  // namespace shardpack
