// StorageBackend: what shardpack needs of one kind of remote storage, as Format is for a dataset
// format. Every remote read goes through an HttpClient (GETs of URLs, storage/http/http_client.h),
// so a backend says how a location of its scheme becomes URLs and a client for them; a writable one
// also gives the Env through which pack writes into it. The backends are listed in one table
// (storage/backends.cc); adding one is a folder (storage/<name>/) and a line there.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/http/http_client.h"
#include "storage/location.h"

namespace shardpack {

// When a file published into a writable store may go up; the writer (pack) says it for each name.
enum class UploadOrder {
  kNotPublished,  // a temporary name: the rename stays on local disk, nothing goes up
  kAny,           // shards and their side files: as soon as an uploader is free
  kAfterEarlier,  // journals: once everything published before them is in the store
  kLast,          // manifests: after every upload, before the publishing rename returns
};
using UploadOrderOf = std::function<UploadOrder(const std::string& name)>;

// What StorageBackend::NewOutputEnv makes: an Env that knows which output it writes.
class StoreOutputEnv : public Env {
 public:
  // Whether `out` is the location this Env writes (so that a caller's own Env is used as it is).
  virtual bool serves(const std::string& out) const = 0;
};

class StorageBackend {
 public:
  virtual ~StorageBackend() = default;

  // The URL scheme this backend serves, lower case, without "://" ("s3").
  virtual const char* scheme() const = 0;

  // Refuses a location of this scheme that cannot be served (InvalidArgument naming it), before
  // any request is made. Called by ParseLocation.
  virtual Status CheckLocation(const Location& /*location*/) const { return Status::OK(); }

  // The URL a client of this backend fetches for `url` (the location, or one shard of a shard list,
  // with no user:password@ left in it), and the client's options for the location (signing,
  // credentials from `options`; InvalidArgument naming the location when they are missing).
  virtual Status ClientUrl(const std::string& url, const RemoteOptions& options, std::string* client_url) const = 0;
  virtual Status PrepareClient(const Location& /*location*/, const RemoteOptions& /*options*/,
                               HttpOptions* /*http*/) const {
    return Status::OK();
  }

  // A client for the URLs ClientUrl gives.
  virtual std::unique_ptr<HttpClient> NewClient(const HttpOptions& http) const = 0;

  // An Env under which `out` is a folder that pack, convert and merge write into (`base` for every
  // other path), uploading each file as it is published, in the order `order` gives. Read-only
  // stores answer InvalidArgument naming `out`.
  virtual Status NewOutputEnv(const Location& out, const RemoteOptions& /*options*/, Env* /*base*/,
                              const UploadOrderOf& /*order*/, std::unique_ptr<Env>* /*env*/) const {
    return Status::InvalidArgument(out.shown + ": " + scheme() +
                                   ":// storage is read-only here: write into a local folder or s3://BUCKET/PREFIX");
  }
};

// The backend for `scheme` (lower case), or nullptr.
const StorageBackend* FindStorageBackend(const std::string& scheme);

// The schemes served, for messages: "http, https, s3".
std::string KnownStorageSchemes();

// Adds a backend to the table (a program's own, or a test's); it must outlive every use. A scheme
// already served is replaced. Not safe while locations are being parsed on other threads.
void RegisterStorageBackend(const StorageBackend* backend);

}  // namespace shardpack
