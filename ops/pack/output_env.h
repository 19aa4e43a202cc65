// The Env through which pack, convert and merge write OUT: the caller's for a local folder; for a
// location in remote storage, the backend's output Env over it (storage/storage_backend.h), which
// uploads each file as it is published in the order pack's files need (PackUploadOrder).
#pragma once

#include <memory>
#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/location.h"
#include "storage/storage_backend.h"

namespace shardpack {

// The order in which a published file of a pack may go up: NAME.tmp is no publication (a shard
// being finished); manifests (the dataset's, a part's)
// last, once every other upload is done, so that a reader never sees a manifest before what it
// lists; journals after everything published before them, so that one never lists a shard that is
// not there; the rest at once.
UploadOrder PackUploadOrder(const std::string& name);

// `given` (nullptr: Env::Default()) for a local OUT, or for a remote one when it already writes
// there (a test's own); else a new output Env held in *holder. A pipe: or shard-list OUT, a
// read-only store, and a format (`format`; nullptr for merge) that does not write through its Env
// are refused, naming OUT and the fix.
Status OutputEnvFor(const Location& out, const Format* format, const RemoteOptions& remote, Env* given,
                    std::unique_ptr<Env>* holder, Env** env);

}  // namespace shardpack
