#include "tools/environment.h"

#include <algorithm>
#include <cstdlib>

#include "ground/units.h"
#include "storage/cache_folder.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

// A set, non-empty value.
bool Text(const GetEnv& getenv, const char* name, std::string* value) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return false;
  *value = v;
  return true;
}

// A positive number; anything else is ignored (the default stays).
bool Number(const GetEnv& getenv, const char* name, double* value) {
  const char* v = getenv(name);
  if (v == nullptr) return false;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(d > 0)) return false;
  *value = d;
  return true;
}

}  // namespace

GetEnv ProcessEnvironment() {
  return [](const char* name) { return std::getenv(name); };
}

void ApplyEnvironment(RemoteOptions* o, const GetEnv& getenv) {
  if (o->cache_dir.empty()) {
    const char* dir = getenv(kCacheEnvVar);
    if (dir != nullptr) o->cache_dir = dir;
  }
  const char* team = getenv(kCacheTeamEnvVar);
  if (team != nullptr && std::string(team) == "1") o->cache_team = true;

  double d = 0;
  if (Number(getenv, "SHARDPACK_HTTP_ATTEMPTS", &d)) o->http.attempts = int(std::min(d, 1000.0));
  if (Number(getenv, "SHARDPACK_HTTP_TIMEOUT", &d)) o->http.timeout_seconds = d;
  if (Number(getenv, "SHARDPACK_HTTP_MAX_BACKOFF", &d)) o->http.max_backoff_seconds = d;
  if (Number(getenv, "SHARDPACK_HTTP_RETRY_SECONDS", &d)) o->http.retry_seconds = d;
  if (Number(getenv, "SHARDPACK_HTTP_MAX_BYTES", &d)) o->http.max_bytes = uint64_t(d);
  std::string index_memory;
  uint64_t bytes = 0;
  if (o->index_memory == 0 && Text(getenv, "SHARDPACK_INDEX_MEMORY", &index_memory) &&
      ParseByteSize(index_memory, &bytes).ok()) {
    o->index_memory = bytes;
  }

  RemoteOptions::S3& s3 = o->s3;
  Text(getenv, "AWS_ACCESS_KEY_ID", &s3.access_key_id);
  Text(getenv, "AWS_SECRET_ACCESS_KEY", &s3.secret_access_key);
  if (const char* token = getenv("AWS_SESSION_TOKEN"); token != nullptr) s3.session_token = token;
  if (!Text(getenv, "AWS_REGION", &s3.region)) Text(getenv, "AWS_DEFAULT_REGION", &s3.region);
  Text(getenv, "AWS_ENDPOINT_URL", &s3.endpoint_url);
  const char* path_style = getenv("SHARDPACK_S3_PATH_STYLE");
  if (path_style != nullptr && std::string(path_style) == "1") s3.path_style = true;
  if (const char* v = getenv("SHARDPACK_S3_PART_SIZE"); v != nullptr && std::strtoull(v, nullptr, 10) > 0) {
    s3.part_size = std::strtoull(v, nullptr, 10);
  }
  if (const char* v = getenv("SHARDPACK_S3_UPLOADS"); v != nullptr && std::atoi(v) > 0) s3.uploads = std::atoi(v);
  if (!Text(getenv, "SHARDPACK_STAGING", &s3.staging_parent)) Text(getenv, "TMPDIR", &s3.staging_parent);
}

std::string TempParentFromEnvironment(const GetEnv& getenv) {
  std::string dir;
  Text(getenv, "TMPDIR", &dir);
  return dir;
}

}  // namespace shardpack
