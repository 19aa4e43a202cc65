#include "tools/environment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
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

// A variable that is set but says nothing the option can take: an error that names it, so that a
// typo in a job script is not run with the default unnoticed.
Status Refuse(const char* name, const char* value, const std::string& takes) {
  return Status::InvalidArgument(std::string(name) + "='" + value + "' in the environment: " + takes +
                                 "; fix or unset it");
}

// A positive number, when the variable is set.
Status Number(const GetEnv& getenv, const char* name, double* value, bool* set) {
  *set = false;
  const char* v = getenv(name);
  if (v == nullptr) return Status::OK();
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(d > 0) || !std::isfinite(d)) return Refuse(name, v, "not a positive number");
  *value = d;
  *set = true;
  return Status::OK();
}

// A whole number of at least 1, when the variable is set.
Status Count(const GetEnv& getenv, const char* name, uint64_t* value, bool* set) {
  *set = false;
  const char* v = getenv(name);
  if (v == nullptr) return Status::OK();
  const std::string text(v);
  uint64_t n = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || n == 0) {
    return Refuse(name, v, "not a whole number of at least 1");
  }
  *value = n;
  *set = true;
  return Status::OK();
}

// A switch: "1" on; "0" or empty off (as unset).
Status Switch(const GetEnv& getenv, const char* name, bool* on) {
  const char* v = getenv(name);
  if (v == nullptr) return Status::OK();
  const std::string text(v);
  if (text != "1" && text != "0" && !text.empty()) return Refuse(name, v, "takes 1 (on) or 0 (off)");
  if (text == "1") *on = true;
  return Status::OK();
}

}  // namespace

GetEnv ProcessEnvironment() {
  return [](const char* name) { return std::getenv(name); };
}

Status ApplyEnvironment(RemoteOptions* o, const GetEnv& getenv) {
  if (o->cache_dir.empty()) {
    const char* dir = getenv(kCacheEnvVar);
    if (dir != nullptr) o->cache_dir = dir;
  }
  SHARDPACK_RETURN_IF_ERROR(Switch(getenv, kCacheTeamEnvVar, &o->cache_team));

  double d = 0;
  bool set = false;
  SHARDPACK_RETURN_IF_ERROR(Number(getenv, "SHARDPACK_HTTP_ATTEMPTS", &d, &set));
  if (set) o->http.attempts = int(std::min(d, 1000.0));
  SHARDPACK_RETURN_IF_ERROR(Number(getenv, "SHARDPACK_HTTP_TIMEOUT", &d, &set));
  if (set) o->http.timeout_seconds = d;
  SHARDPACK_RETURN_IF_ERROR(Number(getenv, "SHARDPACK_HTTP_MAX_BACKOFF", &d, &set));
  if (set) o->http.max_backoff_seconds = d;
  SHARDPACK_RETURN_IF_ERROR(Number(getenv, "SHARDPACK_HTTP_RETRY_SECONDS", &d, &set));
  if (set) o->http.retry_seconds = d;
  SHARDPACK_RETURN_IF_ERROR(Number(getenv, "SHARDPACK_HTTP_MAX_BYTES", &d, &set));
  if (set) o->http.max_bytes = d >= 1.8e19 ? UINT64_MAX : uint64_t(d);
  std::string index_memory;
  if (Text(getenv, "SHARDPACK_INDEX_MEMORY", &index_memory)) {
    uint64_t bytes = 0;
    if (!ParseByteSize(index_memory, &bytes).ok() || bytes == 0) {
      return Refuse("SHARDPACK_INDEX_MEMORY", index_memory.c_str(), "not a size such as 512MB");
    }
    if (o->index_memory == 0) o->index_memory = bytes;
  }

  RemoteOptions::S3& s3 = o->s3;
  Text(getenv, "AWS_ACCESS_KEY_ID", &s3.access_key_id);
  Text(getenv, "AWS_SECRET_ACCESS_KEY", &s3.secret_access_key);
  if (const char* token = getenv("AWS_SESSION_TOKEN"); token != nullptr) s3.session_token = token;
  if (!Text(getenv, "AWS_REGION", &s3.region)) Text(getenv, "AWS_DEFAULT_REGION", &s3.region);
  Text(getenv, "AWS_ENDPOINT_URL", &s3.endpoint_url);
  SHARDPACK_RETURN_IF_ERROR(Switch(getenv, "SHARDPACK_S3_PATH_STYLE", &s3.path_style));
  uint64_t n = 0;
  SHARDPACK_RETURN_IF_ERROR(Count(getenv, "SHARDPACK_S3_PART_SIZE", &n, &set));
  if (set) s3.part_size = n;
  SHARDPACK_RETURN_IF_ERROR(Count(getenv, "SHARDPACK_S3_UPLOADS", &n, &set));
  if (set) s3.uploads = int(std::min<uint64_t>(n, 1024));
  if (!Text(getenv, "SHARDPACK_STAGING", &s3.staging_parent)) Text(getenv, "TMPDIR", &s3.staging_parent);
  return Status::OK();
}

std::string TempParentFromEnvironment(const GetEnv& getenv) {
  std::string dir;
  Text(getenv, "TMPDIR", &dir);
  return dir;
}

}  // namespace shardpack
