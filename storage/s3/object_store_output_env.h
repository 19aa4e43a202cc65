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

#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/http/http_client.h"
#include "storage/s3/s3_object_store.h"
#include "storage/storage_backend.h"

namespace shardpack {

struct ObjectStoreOutputOptions {
  // Files larger than this go as a multipart upload in parts of this size (S3 needs at least 5 MiB
  // a part).
  uint64_t part_size = uint64_t(64) << 20;
  // Files uploading at once, and the most published files on local disk.
  int uploads = 2;
  // Where the staging folder is made.
  std::string staging_parent = "/tmp";
  // The bucket's address (endpoint, region, path style) and the client's options (signing).
  RemoteOptions::S3 s3;
  HttpOptions http;
  // When each published name may go up (the writer's rule: pack's journals after what came before
  // them, its manifests last); empty: every file as soon as an uploader is free.
  UploadOrderOf upload_order;
  // Makes the HTTP client of each uploader (and one for the caller's calls); empty: libcurl's. The
  // seam through which tests serve the S3 API themselves and delay or fail requests.
  std::function<std::unique_ptr<HttpClient>(const HttpOptions&)> new_http_client;
};

// That `out` names a prefix in a valid bucket (InvalidArgument naming it otherwise), and where.
Status CheckObjectStoreOutput(const std::string& out, const RemoteOptions::S3& settings, S3Location* location);

// An Env for which `out` (s3://BUCKET/PREFIX) is the output folder; every other path goes to
// `base`. Lists OUT in the store first; InvalidArgument without credentials, IOError when the store
// does not answer.
Status NewObjectStoreOutputEnv(const std::string& out, Env* base, const ObjectStoreOutputOptions& options,
                               std::unique_ptr<Env>* env);

}  // namespace shardpack
