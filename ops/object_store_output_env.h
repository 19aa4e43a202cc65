// pack, convert and merge into OUT = s3://BUCKET/PREFIX: an Env under which that URL is a folder.
//
// The pipeline writes as it writes a local folder (temporary names, then a rename); the files land
// in a local staging folder, and a rename to a final name publishes the file: it is uploaded to
// PREFIX/<name> (in parts when large, retried by the HTTP client), then removed locally. So local
// disk holds the shard being written and at most `uploads` published files waiting or uploading
// (RenameFile waits for room), never the dataset.
//
// Order is what keeps a dataset in the store honest:
// - a journal (pack-journal.json, a part's journal) is uploaded only once every file published
//   before it is in the store, so that it never lists a shard that is not there;
// - the manifest (or a part manifest) waits for every upload to finish, then goes up at once: a
//   reader never sees a manifest before all that it lists.
// An upload that fails for good fails the next RenameFile (and so the pack) with the URL; what is
// already in the store stays, and `pack --resume` continues from the journal there.
//
// Reads of OUT see the store as listed when the Env was made, plus what this Env changed since;
// other processes' uploads after that are not seen (parts never need each other's files).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "formats/common/format.h"
#include "ground/http_client.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

struct ObjectStoreOutputOptions {
  // Files larger than this go as a multipart upload in parts of this size (S3 needs at least 5 MiB
  // a part). $SHARDPACK_S3_PART_SIZE.
  uint64_t part_size = uint64_t(64) << 20;
  // Files uploading at once, and the most published files on local disk ($SHARDPACK_S3_UPLOADS).
  int uploads = 2;
  // Where the staging folder is made: $SHARDPACK_STAGING, else $TMPDIR, else /tmp.
  std::string staging_parent;
  // Makes the HTTP client of each uploader (and one for the caller's calls); empty: libcurl's. The
  // seam through which tests serve the S3 API themselves and delay or fail requests.
  std::function<std::unique_ptr<HttpClient>(const HttpOptions&)> new_http_client;
};
ObjectStoreOutputOptions ObjectStoreOutputOptionsFromEnvironment();

// An Env for which `out` (s3://BUCKET/PREFIX) is the output folder; every other path goes to
// `base`. Lists OUT in the store first; InvalidArgument without credentials, IOError when the store
// does not answer.
Status NewObjectStoreOutputEnv(const std::string& out, Env* base, const ObjectStoreOutputOptions& options,
                               std::unique_ptr<Env>* env);

// The Env through which a run writes OUT: the caller's (`given`; nullptr: Env::Default()) for a
// local folder; for s3://, a new object-store Env over it (options from the environment), held in
// *holder, unless `given` is already one for OUT (NewObjectStoreOutputEnv; tests make their own).
// http(s):// is refused (it is read-only), and so is an object store for a format (`format`;
// nullptr for merge) that does not write through its Env.
Status OutputEnvFor(const std::string& out, const Format* format, Env* given, std::unique_ptr<Env>* holder, Env** env);

}  // namespace shardpack
