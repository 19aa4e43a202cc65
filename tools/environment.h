// The configuration shardpack takes from the environment, read at the edges only: the CLI and the
// Python module call these, and the library below reads no variable (docs/remote.md lists them).
#pragma once

#include <functional>
#include <string>

#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// Reads a variable; std::getenv by default, a table in tests.
using GetEnv = std::function<const char*(const char*)>;
GetEnv ProcessEnvironment();

// Fills what the environment sets and the caller left unset: cache_dir ($SHARDPACK_CACHE, when
// empty), cache_team ($SHARDPACK_CACHE_TEAM=1), the HTTP client's limits ($SHARDPACK_HTTP_ATTEMPTS,
// _TIMEOUT, _MAX_BACKOFF, _RETRY_SECONDS, _MAX_BYTES: positive numbers), and S3's credentials,
// region, endpoint and upload settings ($AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY,
// $AWS_SESSION_TOKEN, $AWS_REGION else $AWS_DEFAULT_REGION, $AWS_ENDPOINT_URL,
// $SHARDPACK_S3_PATH_STYLE=1, $SHARDPACK_S3_PART_SIZE and $SHARDPACK_S3_UPLOADS: whole numbers,
// $SHARDPACK_STAGING else $TMPDIR), and the readers' bound of shard indexes ($SHARDPACK_INDEX_MEMORY,
// a size such as 512MB). InvalidArgument naming the variable when one is set to something its
// option cannot take (a typo in a job script would otherwise run with the default unnoticed);
// switches take 1 or 0.
Status ApplyEnvironment(RemoteOptions* options, const GetEnv& getenv = ProcessEnvironment());

// $TMPDIR, or empty: where doctor's temporary folder goes.
std::string TempParentFromEnvironment(const GetEnv& getenv = ProcessEnvironment());

}  // namespace shardpack
