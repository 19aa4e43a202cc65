#include "ops/remote_dataset.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ground/checksum.h"
#include "ground/manifest_json.h"
#include "shardpack/manifest.h"
#include "shardpack/shard_spec.h"

namespace shardpack {
namespace {

constexpr uint64_t kMaxManifestBytes = uint64_t(1) << 30;

// The files of a dataset, as its manifest lists them, each with its checksum.
std::vector<SideFile> ListedFiles(const Manifest& m) {
  std::vector<SideFile> files;
  for (const ShardEntry& s : m.shards) {
    files.push_back({s.file, s.xxh64});
    if (!s.index.file.empty()) files.push_back(s.index);
    if (!s.sample_table.file.empty()) files.push_back(s.sample_table);
    for (const SideFile& f : s.side_files) files.push_back(f);
  }
  return files;
}

// Fetches url into `path` through a temporary file of this process, checked against `xxh64` (when
// given) before it takes the name: nothing unchecked ever carries a published name.
Status Download(Env* env, HttpClient* http, const std::string& url, const std::string& path, const std::string& xxh64) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  std::unique_ptr<WritableFile> file;
  StreamingXxh64 hash;
  uint64_t received = 0;
  Status s = env->NewWritableFile(part, &file);
  if (s.ok()) {
    s = http->Get(
        url,
        [&](std::string_view data) {
          if (file == nullptr) return Status::IOError("cannot reopen " + part);
          hash.Update(data);
          received += data.size();
          return file->Append(data);
        },
        [&](bool from_start) -> uint64_t {
          // A retried attempt continues after the bytes kept (they are in the hash already), or,
          // when the server serves no ranges, starts the file over.
          if (from_start) {
            hash.Reset();
            received = 0;
            file.reset();
            if (!env->NewWritableFile(part, &file).ok()) file.reset();
          }
          return received;
        });
  }
  if (s.ok() && file == nullptr) s = Status::IOError("cannot reopen " + part);
  // Durable before it takes its name: after a machine crash the cache holds the checked bytes or
  // no file, never a published name over lost pages (readers do not re-hash whole shards).
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok() && !xxh64.empty() && ChecksumHex(hash.Digest()) != xxh64) {
    s = Status::DataLoss(url + " does not match the checksum its manifest lists");
  }
  if (s.ok()) s = env->RenameFile(part, path);
  if (!s.ok()) (void)env->RemoveFile(part);
  return s;
}

// Download, again when the bytes that arrived do not match their checksum (a proxy or a network
// that damaged them); a copy that keeps failing is damaged on the server.
Status DownloadChecked(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                       const std::string& xxh64) {
  constexpr int kTries = 3;
  Status s;
  for (int i = 0; i < kTries; ++i) {
    s = Download(env, http, url, path, xxh64);
    if (s.code() != Status::Code::kDataLoss) return s;
  }
  return s.WithSuffix(", in " + std::to_string(kTries) + " downloads (the server holds a damaged or changed copy)");
}

// AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1 (as the AWS tools do).
std::string AwsRegion() {
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return "us-east-1";
}

// Attempts and timeout from the environment, for jobs whose network needs other values.
HttpOptions HttpOptionsFromEnvironment() {
  HttpOptions o;
  if (const char* v = std::getenv("SHARDPACK_HTTP_ATTEMPTS"); v != nullptr && std::atoi(v) > 0)
    o.attempts = std::atoi(v);
  if (const char* v = std::getenv("SHARDPACK_HTTP_TIMEOUT"); v != nullptr && std::atof(v) > 0) {
    o.connect_timeout_seconds = o.low_speed_seconds = std::atof(v);
  }
  return o;
}

std::string BaseName(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool IsRemoteLocation(const std::string& location) {
  for (const char* scheme : {"http://", "https://", "s3://", "pipe:"}) {
    if (location.rfind(scheme, 0) == 0) return true;
  }
  return false;
}

Status S3ToHttpUrl(const std::string& s3_url, std::string* http_url) {
  if (s3_url.rfind("s3://", 0) != 0) {
    *http_url = s3_url;
    return Status::OK();
  }
  const std::string rest = s3_url.substr(5);
  const size_t slash = rest.find('/');
  const std::string bucket = rest.substr(0, slash), key = slash == std::string::npos ? "" : rest.substr(slash);
  if (bucket.empty()) return Status::InvalidArgument(s3_url + ": no bucket (s3://BUCKET/PREFIX)");
  const char* endpoint = std::getenv("AWS_ENDPOINT_URL");
  if (endpoint != nullptr && *endpoint != '\0') {  // S3-compatible stores: path-style addressing
    std::string e = endpoint;
    while (!e.empty() && e.back() == '/') e.pop_back();
    *http_url = e + "/" + bucket + key;
    return Status::OK();
  }
  const char* path_style = std::getenv("SHARDPACK_S3_PATH_STYLE");
  const std::string region = AwsRegion();
  *http_url = path_style != nullptr && std::string(path_style) == "1"
                  ? "https://s3." + region + ".amazonaws.com/" + bucket + key
                  : "https://" + bucket + ".s3." + region + ".amazonaws.com" + key;
  return Status::OK();
}

Status CheckDatasetFileName(const std::string& name) {
  const bool escapes = name.empty() || name[0] == '/' || name.find("..") != std::string::npos ||
                       name.find("://") != std::string::npos || name.find('\\') != std::string::npos ||
                       name.find('?') != std::string::npos || name.find('#') != std::string::npos;
  if (escapes) {
    return Status::DataLoss("the manifest lists '" + name +
                            "', which is not a file inside the dataset folder: refused (a manifest must not send a "
                            "reader elsewhere)");
  }
  return Status::OK();
}

Status CacheRemoteDataset(const std::string& url, const std::string& cache_root, Env* env, HttpClient* http,
                          std::string* local_dir) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string manifest_url = base + "/" + kManifestFileName;
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(HttpGetToString(http, manifest_url, kMaxManifestBytes, &text));
  SHARDPACK_RETURN_IF_ERROR(CheckManifestText(text, manifest_url));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  Manifest manifest;
  Status s = ManifestFromJson(j, &manifest);
  if (s.code() == Status::Code::kUnsupported) return Status::Unsupported(manifest_url + ": " + s.message());
  if (!s.ok()) return Status::DataLoss(manifest_url + ": " + s.message());
  const std::vector<SideFile> files = ListedFiles(manifest);
  for (const SideFile& f : files) SHARDPACK_RETURN_IF_ERROR(CheckDatasetFileName(f.file));

  const std::string dir = JoinPath(cache_root, BaseName(base) + "-" + ChecksumHex(Xxh64(base)));
  *local_dir = dir;
  const std::string local_manifest = JoinPath(dir, kManifestFileName);
  const auto complete = [&] {  // the manifest is written after every file was checked
    std::string cached;
    return env->FileExists(local_manifest) && env->ReadFile(local_manifest, kMaxManifestBytes, &cached).ok() &&
           cached == text;
  };
  if (complete()) return Status::OK();
  SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(dir));
  // One filler at a time per cached dataset on this machine: processes sharing the cache (ranks,
  // loader workers) wait here, and the ones after the first find the copy complete, so each file
  // is downloaded once.
  std::unique_ptr<FileLock> lock;
  const Status locked = env->LockFile(JoinPath(dir, "fill.lock"), &lock);
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  if (complete()) return Status::OK();
  // Another version of the dataset: without its manifest the copy no longer looks complete.
  if (env->FileExists(local_manifest)) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(local_manifest));
  for (const SideFile& f : files) {
    const std::string path = JoinPath(dir, f.file);
    SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(path.substr(0, path.find_last_of('/'))));
    uint64_t have = 0, size = 0;
    // A published name was checked when it was taken; a file of the earlier version is checked again.
    if (env->FileExists(path) && ChecksumFile(env, path, &have, &size).ok() && ChecksumHex(have) == f.xxh64) continue;
    SHARDPACK_RETURN_IF_ERROR(DownloadChecked(env, http, base + "/" + f.file, path, f.xxh64));
  }
  return WriteFileAtomically(env, local_manifest, text);
}

namespace {

// Runs `command` (sh -c) and writes what it prints into `path` through a temporary file, published
// only when the command exits with status 0.
Status RunPipeToFile(Env* env, const std::string& command, const std::string& path) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewWritableFile(part, &file));
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    (void)env->RemoveFile(part);
    return Status::FromErrno("pipe:" + command + ": cannot start the command", errno);
  }
  Status s;
  std::string buffer(1 << 20, '\0');
  size_t n = 0;
  while (s.ok() && (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) s = file->Append({buffer.data(), n});
  if (s.ok() && std::ferror(pipe)) s = Status::IOError("pipe:" + command + ": cannot read its output");
  const int status = ::pclose(pipe);  // after a failed write too: never leave the command behind
  if (s.ok() && status != 0) {
    s = Status::IOError(
        "pipe:" + command + ": the command " +
        (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status)) : std::string("was killed")));
  }
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(part, path);
  if (!s.ok()) (void)env->RemoveFile(part);
  return s;
}

}  // namespace

Status CacheRemoteShards(const std::vector<std::string>& urls, const std::string& cache_root, Env* env,
                         HttpClient* http, std::vector<std::string>* local_paths) {
  local_paths->clear();
  std::string all;
  for (const std::string& u : urls) all += u + "\n";
  const std::string dir = JoinPath(cache_root, "shards-" + ChecksumHex(Xxh64(all)));
  SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(dir));
  std::unique_ptr<FileLock> lock;  // one filler at a time, as for a dataset
  const Status locked = env->LockFile(JoinPath(dir, "fill.lock"), &lock);
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  for (const std::string& url : urls) {
    const std::string name = BaseName(url);
    const std::string path = JoinPath(dir, name);
    if (!CheckDatasetFileName(name).ok() || name.find('/') != std::string::npos) {
      return Status::InvalidArgument(url + ": not a shard URL");
    }
    if (std::find(local_paths->begin(), local_paths->end(), path) != local_paths->end()) {
      return Status::InvalidArgument(url + ": two shards of the list share the name " + name);
    }
    // No manifest, so no checksum: libcurl holds the body to the length the server announced, a
    // pipe: command to its exit status.
    if (!env->FileExists(path) && url.rfind("pipe:", 0) == 0) {
      SHARDPACK_RETURN_IF_ERROR(RunPipeToFile(env, url.substr(5), path));
    } else if (!env->FileExists(path)) {
      SHARDPACK_RETURN_IF_ERROR(Download(env, http, url, path, ""));
    }
    local_paths->push_back(path);
  }
  return Status::OK();
}

namespace {

// The cache folder from the environment, and the client, for a remote location: signing with the
// standard AWS variables for s3://.
Status RemoteSetup(const std::string& location, std::string* cache, std::unique_ptr<HttpClient>* http) {
  const char* dir = std::getenv(kCacheEnvVar);
  if (dir == nullptr || *dir == '\0') {
    return Status::InvalidArgument("reading " + location + " needs a local cache folder: set " + kCacheEnvVar +
                                   "=DIR (a folder with room for the dataset)");
  }
  *cache = dir;
  HttpOptions options = HttpOptionsFromEnvironment();
  if (location.rfind("s3://", 0) == 0) {
    const char* id = std::getenv("AWS_ACCESS_KEY_ID");
    const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
    if (id == nullptr || *id == '\0' || secret == nullptr || *secret == '\0') {
      return Status::InvalidArgument("reading " + location +
                                     " needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                                     "AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL for a store other "
                                     "than AWS)");
    }
    options.aws.region = AwsRegion();
    options.aws.access_key_id = id;
    options.aws.secret_access_key = secret;
    if (const char* token = std::getenv("AWS_SESSION_TOKEN"); token != nullptr) options.aws.session_token = token;
  }
  *http = NewCurlHttpClient(options);
  return Status::OK();
}

}  // namespace

Status ResolveDatasetLocation(const std::string& location, Env* env, std::string* local_dir) {
  if (!IsRemoteLocation(location)) {
    *local_dir = location;
    return Status::OK();
  }
  if (location.rfind("pipe:", 0) == 0) {
    return Status::InvalidArgument(location + ": a pipe: command gives WebDataset shards, not a dataset folder; " +
                                   "open it as a shard list (e.g. \"pipe:cat train-{000000..000009}.tar\")");
  }
  std::string cache, url;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(location, &cache, &http));
  SHARDPACK_RETURN_IF_ERROR(S3ToHttpUrl(location, &url));
  return CacheRemoteDataset(url, cache, env ? env : Env::Default(), http.get(), local_dir);
}

Status ResolveShardList(const std::string& spec, Env* env, std::vector<std::string>* local_paths) {
  std::vector<std::string> paths;
  SHARDPACK_RETURN_IF_ERROR(ExpandShardSpec(spec, &paths));
  if (!IsRemoteLocation(spec)) {
    *local_paths = std::move(paths);
    return Status::OK();
  }
  std::string cache;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(spec, &cache, &http));
  for (std::string& p : paths) SHARDPACK_RETURN_IF_ERROR(S3ToHttpUrl(p, &p));
  return CacheRemoteShards(paths, cache, env ? env : Env::Default(), http.get(), local_paths);
}

}  // namespace shardpack
