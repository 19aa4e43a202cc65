// AnchoredEnv: an Env whose paths below one folder go through that folder as it was opened, never
// through its name again.
//
// A cache folder is checked by name (storage/cache_folder.h: owner, mode, the folders above), then
// used for the whole run: every shard opened, reopened between epochs, renamed into place. Whoever
// could rename the folder (or one above it) between those moments could put a folder of theirs in
// its place, and every later open by name would read it. So the folder is opened once, right after
// its check (O_DIRECTORY | O_NOFOLLOW, and the opened folder compared with the checked one), and
// every path below it is reached through that descriptor, as Linux's /proc/self/fd/N names it: a
// folder moved or swapped afterwards changes nothing this Env reads or writes. Paths elsewhere pass
// through unchanged. Messages keep the folder's own name.
#pragma once

#include <memory>
#include <string>

#include "shardpack/env.h"

namespace shardpack {

// Opens `folder` (which `base` describes with StatPath, as it was checked) and returns an Env over
// `base` anchored there. InvalidArgument when the folder opened is not the one described (swapped
// since its check) or is a symbolic link; Unsupported where `base` has no such notion (an Env of
// another kind): then the caller goes on with `base`.
Status AnchorEnvAt(Env* base, const std::string& folder, std::unique_ptr<Env>* anchored);

}  // namespace shardpack
