// A dataset location, classified once where it enters the library (the public API's entry points:
// pack, convert, merge, verify, stat, the reader, the loader, bench, doctor): everything below takes
// the typed value and asks it, never the string, what it is.
//
//   /data/ds, ds                 a local folder (or, for pack, a source tree or list file)
//   /data/train-{0..9}.tar, a.tar::b.tar
//                                a local shard list (shardpack/shard_spec.h)
//   https://host/ds, s3://b/ds   a folder in remote storage, read through its backend
//                                (storage/storage_backend.h: one per scheme, in one table)
//   https://host/train-{0..9}.tar
//                                a remote shard list
//   pipe:COMMAND                 a shard list whose shards are what COMMAND prints
//
// A URL's scheme must be a known backend's, and the backend checks the rest (S3: the bucket's name):
// a location that names no storage shardpack can read is refused here, naming it and the schemes.
#pragma once

#include <string>

#include "shardpack/status.h"

namespace shardpack {

class StorageBackend;

struct Location {
  enum class Kind { kLocal, kRemote, kPipe };
  Kind kind = Kind::kLocal;
  bool shard_list = false;                  // a brace range, a "::" list or a .tar path: shards, not a folder
  std::string text;                         // as the user gave it (credentials included: never print it; see `shown`)
  std::string shown;                        // for messages: `text` with user:password@ taken out
  std::string scheme;                       // kRemote: "http", "https", "s3", ...
  const StorageBackend* backend = nullptr;  // kRemote: the one that serves `scheme`
  std::string command;                      // kPipe: what follows "pipe:"

  bool remote() const { return kind == Kind::kRemote; }
  bool local() const { return kind == Kind::kLocal; }
  bool pipe() const { return kind == Kind::kPipe; }
};

// Classifies `text`; InvalidArgument naming it when it is empty, names a scheme no backend serves,
// or is refused by its backend (StorageBackend::CheckLocation).
Status ParseLocation(const std::string& text, Location* location);

// A URL's scheme, lower case ("https"), and the part after "scheme://"; both empty when `url` has
// no scheme.
std::string UrlScheme(const std::string& url);
std::string UrlPath(const std::string& url);

// A location that a file in `dir` names (a view's base, docs/views.md): a URL or an absolute path
// as it is, a relative path from `dir`.
std::string LocationFrom(const std::string& dir, const std::string& text);

// Whether `text` holds a URL scheme anywhere ("x://"): a name a manifest lists must not.
bool MentionsUrl(const std::string& text);

}  // namespace shardpack
