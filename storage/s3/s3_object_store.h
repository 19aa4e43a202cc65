// The S3 API calls that writing a dataset into s3://BUCKET/PREFIX needs: put an object (whole, or
// in parts for large files), look at one, delete one, list a prefix. Each call is one request (or
// a few) through an HttpClient, retried by it; signing is the client's (HttpOptions::aws).
//
// Every object shardpack uploads carries its XXH64 as user metadata (x-amz-meta-xxh64), so that a
// later run can tell an uploaded shard is the one it means without downloading it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/http/http_client.h"

namespace shardpack {

// A bucket and a key prefix under it, as s3://BUCKET/PREFIX names them.
struct S3Location {
  // The bucket's HTTP(S) URL, without a trailing slash: ENDPOINT/BUCKET for S3-compatible stores
  // (path-style), else https://BUCKET.s3.REGION.amazonaws.com (or path-style
  // https://s3.REGION.amazonaws.com/BUCKET with path_style); RemoteOptions::S3 gives them.
  std::string bucket_url;
  std::string prefix;  // without leading or trailing slashes; may be empty
};
// Refuses a URL whose bucket breaks S3's naming rules (InvalidArgument naming `s3_url`).
Status ParseS3Location(const std::string& s3_url, const RemoteOptions::S3& settings, S3Location* location);
Status CheckS3BucketName(const std::string& bucket, const std::string& s3_url);
// The same checks, without the settings: that `s3_url` names a valid bucket.
Status CheckS3Location(const std::string& s3_url);

// The HTTP(S) URL of `key` (a prefix, or an object's whole key) in `location`'s bucket, the key
// encoded as SigV4 signs it (storage/url.h's UriEncode): spaces, '+', '%' and non-ASCII bytes alike.
std::string S3KeyUrl(const S3Location& location, const std::string& key);

// The objects directly under a prefix: files with their sizes, and the "folders" below it.
struct S3Listing {
  std::map<std::string, uint64_t> files;
  std::set<std::string> folders;
};

// An object as HEAD describes it.
struct S3ObjectInfo {
  bool exists = false;
  uint64_t size = 0;
  std::string xxh64;  // x-amz-meta-xxh64; empty when the uploader set none
};

class S3ObjectStore {
 public:
  S3ObjectStore(S3Location location, HttpClient* http) : location_(std::move(location)), http_(http) {}

  // The HTTP(S) URL of object PREFIX/name.
  std::string Url(const std::string& name) const;

  // One PUT of the whole object.
  Status Put(const std::string& name, std::string_view data, const std::string& xxh64);

  // A multipart upload: started, its parts (numbered from 1, each but the last at least 5 MiB on
  // AWS) put, then completed, which makes the object appear whole at once; or aborted, which frees
  // the parts already stored.
  Status StartMultipart(const std::string& name, const std::string& xxh64, std::string* upload_id);
  Status PutPart(const std::string& name, const std::string& upload_id, int part_number, std::string_view data,
                 std::string* etag);
  Status CompleteMultipart(const std::string& name, const std::string& upload_id,
                           const std::vector<std::string>& etags);
  Status AbortMultipart(const std::string& name, const std::string& upload_id);
  // The multipart uploads started and neither completed nor aborted, of objects directly under
  // PREFIX/: (name, upload id) pairs, every page of ListMultipartUploads.
  Status ListMultipartUploads(std::vector<std::pair<std::string, std::string>>* uploads);

  Status Head(const std::string& name, S3ObjectInfo* info);
  Status Get(const std::string& name, uint64_t max_bytes, std::string* contents);
  // Deleting an object that does not exist is not an error (S3 answers 204 either way).
  Status Delete(const std::string& name);
  // The objects directly under PREFIX/, every page of the listing.
  Status List(S3Listing* listing);

 private:
  Status Send(const std::string& method, const std::string& url, std::vector<std::string> headers,
              std::string_view body, HttpResponse* response);

  const S3Location location_;
  HttpClient* const http_;
};

}  // namespace shardpack
