#include "ops/remote_dataset.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ground/checksum.h"
#include "ground/manifest_json.h"
#include "ground/url.h"
#include "ops/cache_folder.h"
#include "ops/s3_object_store.h"
#include "ops/shard_download.h"
#include "shardpack/manifest.h"
#include "shardpack/shard_spec.h"

namespace shardpack {
namespace {

std::vector<SideFile> ShardFiles(const Manifest& m) {
  std::vector<SideFile> files;
  for (const ShardEntry& s : m.shards) files.push_back({s.file, s.xxh64});
  return files;
}

std::vector<SideFile> SmallFiles(const Manifest& m) {
  std::vector<SideFile> files;
  for (const ShardEntry& s : m.shards) {
    if (!s.index.file.empty()) files.push_back(s.index);
    if (!s.sample_table.file.empty()) files.push_back(s.sample_table);
    for (const SideFile& f : s.side_files) files.push_back(f);
  }
  return files;
}

// The client's options from the environment, for jobs whose network or store needs other values
// than the defaults (docs/remote.md lists them). A value that is not a positive number is ignored.
HttpOptions HttpOptionsFromEnvironment() {
  HttpOptions o;
  const auto number = [](const char* name, double* value) {
    const char* v = std::getenv(name);
    if (v == nullptr) return false;
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(d > 0)) return false;
    *value = d;
    return true;
  };
  double d = 0;
  if (number("SHARDPACK_HTTP_ATTEMPTS", &d)) o.attempts = int(std::min(d, 1000.0));
  if (number("SHARDPACK_HTTP_TIMEOUT", &d)) o.connect_timeout_seconds = o.low_speed_seconds = d;
  if (number("SHARDPACK_HTTP_MAX_BACKOFF", &d)) o.max_backoff_seconds = d;
  if (number("SHARDPACK_HTTP_RETRY_SECONDS", &d)) o.retry_seconds = d;
  if (number("SHARDPACK_HTTP_MAX_BYTES", &d)) o.max_body_bytes = uint64_t(d);
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
  S3Location location;
  SHARDPACK_RETURN_IF_ERROR(ParseS3Location(s3_url, &location));
  *http_url = S3KeyUrl(location, location.prefix);
  return Status::OK();
}

std::string RemoteFileUrl(const std::string& base, const std::string& name) {
  return base + "/" + UriEncode(name, /*keep_slash=*/true);
}

Status CheckDatasetFileName(const std::string& name) {
  const auto escapes = [](const std::string& n) {
    if (n.empty() || n[0] == '/' || n.find("..") != std::string::npos || n.find("://") != std::string::npos ||
        n.find('\\') != std::string::npos || n.find('?') != std::string::npos || n.find('#') != std::string::npos) {
      return true;
    }
    for (const char c : n) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;  // control characters
    }
    return false;
  };
  // Decoded too: a server decodes "%2e%2e" to ".." and "%2f" to "/" before it looks the name up,
  // so an encoded '.', '/' or '\\' is refused as the literal ones are.
  std::string lower = name;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  const bool encoded_separator = lower.find("%2e") != std::string::npos || lower.find("%2f") != std::string::npos ||
                                 lower.find("%5c") != std::string::npos;
  if (escapes(name) || escapes(PercentDecode(name)) || encoded_separator) {
    return Status::DataLoss("the manifest lists '" + name +
                            "', which is not a file inside the dataset folder: refused (a manifest must not send a "
                            "reader elsewhere)");
  }
  return Status::OK();
}

Status FetchRemoteManifest(const std::string& url, HttpClient* http, RemoteManifest* remote) {
  remote->base = url;
  while (!remote->base.empty() && remote->base.back() == '/') remote->base.pop_back();
  const std::string manifest_url = remote->base + "/" + kManifestFileName;
  SHARDPACK_RETURN_IF_ERROR(HttpGetToString(http, manifest_url, kMaxSmallFileBytes, &remote->text));
  SHARDPACK_RETURN_IF_ERROR(CheckManifestText(remote->text, manifest_url));
  const nlohmann::json j = nlohmann::json::parse(remote->text, nullptr, /*allow_exceptions=*/false);
  Status s = ManifestFromJson(j, &remote->manifest);
  if (s.code() == Status::Code::kUnsupported) return Status::Unsupported(manifest_url + ": " + s.message());
  if (!s.ok()) return Status::DataLoss(manifest_url + ": " + s.message());
  for (const std::vector<SideFile>& files : {ShardFiles(remote->manifest), SmallFiles(remote->manifest)}) {
    for (const SideFile& f : files) SHARDPACK_RETURN_IF_ERROR(CheckDatasetFileName(f.file));
  }
  return Status::OK();
}

std::vector<SideFile> RemoteManifest::shard_files() const { return ShardFiles(manifest); }
std::vector<SideFile> RemoteManifest::small_files() const { return SmallFiles(manifest); }

Status CacheRemoteDataset(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                          bool with_shards, Env* env, HttpClient* http, std::string* local_dir) {
  const std::string dir = JoinPath(cache_root, BaseName(remote.base) + "-" + ChecksumHex(Xxh64(remote.base)));
  *local_dir = dir;
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, cache_root, modes));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, dir, modes));
  const std::string local_manifest = JoinPath(dir, kManifestFileName);
  // The manifest is written after every small file was checked, and when it is the server's, the
  // files there belong to this version too.
  const auto current = [&] {
    std::string cached;
    if (!env->FileExists(local_manifest) || !env->ReadFile(local_manifest, kMaxSmallFileBytes, &cached).ok() ||
        cached != remote.text) {
      return false;
    }
    // A small file deleted or changed since its check (by hand, a cleaner, a failing disk) is
    // checked or fetched again.
    for (const SideFile& f : remote.small_files()) {
      if (!IsCheckedCopy(env, JoinPath(dir, f.file), f.xxh64)) return false;
    }
    return true;
  };
  if (!current()) {
    // One filler at a time per cached dataset on this machine: processes sharing the cache (ranks,
    // loader workers) wait here, and the ones after the first find the copy current.
    std::unique_ptr<FileLock> lock;
    const Status locked = env->LockFile(JoinPath(dir, "fill.lock"), &lock, modes.file());
    if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
    if (!current()) {
      // Another version of the dataset, or files changed since their check: without its manifest
      // the copy is no longer current, and a file that does not hold the new version's bytes is
      // removed (those that do are recorded as checked).
      FileStat st;
      if (env->StatPath(local_manifest, &st).ok()) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(local_manifest));
      for (const std::vector<SideFile>& files : {remote.shard_files(), remote.small_files()}) {
        for (const SideFile& f : files) {
          const std::string path = JoinPath(dir, f.file);
          bool good = false;
          if (!IsCheckedCopy(env, path, f.xxh64))
            SHARDPACK_RETURN_IF_ERROR(CheckCachedCopy(env, path, f.xxh64, modes, &good));
        }
      }
      for (const SideFile& f : remote.small_files()) {
        const std::string path = JoinPath(dir, f.file);
        SHARDPACK_RETURN_IF_ERROR(PrepareCacheSubfolders(env, dir, path.substr(0, path.find_last_of('/')), modes));
        if (!IsCheckedCopy(env, path, f.xxh64)) {  // fill.lock serialises these: no lock of their own
          SHARDPACK_RETURN_IF_ERROR(
              DownloadToFile(env, http, RemoteFileUrl(remote.base, f.file), path, f.xxh64, kMaxSmallFileBytes, modes));
        }
      }
      SHARDPACK_RETURN_IF_ERROR(WriteCacheFile(env, local_manifest, remote.text, modes, /*sync=*/true));
    }
  }
  if (!with_shards) return Status::OK();
  for (const ShardEntry& shard : remote.manifest.shards) {
    const std::string path = JoinPath(dir, shard.file);
    SHARDPACK_RETURN_IF_ERROR(PrepareCacheSubfolders(env, dir, path.substr(0, path.find_last_of('/')), modes));
    SHARDPACK_RETURN_IF_ERROR(
        FetchIntoCache(env, http, RemoteFileUrl(remote.base, shard.file), path, shard.xxh64, shard.bytes, modes));
  }
  return Status::OK();
}

namespace {

// Runs `command` (sh -c) and writes what it prints into `path` through a temporary file, published
// only when the command exits with status 0.
Status RunPipeToFile(Env* env, const std::string& command, const std::string& path, const CacheModes& modes) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  std::unique_ptr<WritableFile> file;
  (void)env->RemoveFile(part);  // a leftover of a killed process with this pid, or a planted name
  SHARDPACK_RETURN_IF_ERROR(env->NewExclusiveFile(part, modes.file(), &file));
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

Status CacheRemoteShards(const std::vector<std::string>& urls, const std::string& cache_root, const CacheModes& modes,
                         Env* env, HttpClient* http, std::vector<std::string>* local_paths) {
  local_paths->clear();
  std::string all;
  for (const std::string& u : urls) all += u + "\n";
  const std::string dir = JoinPath(cache_root, "shards-" + ChecksumHex(Xxh64(all)));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, cache_root, modes));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, dir, modes));
  std::unique_ptr<FileLock> lock;  // one filler at a time, as for a dataset
  const Status locked = env->LockFile(JoinPath(dir, "fill.lock"), &lock, modes.file());
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
      SHARDPACK_RETURN_IF_ERROR(RunPipeToFile(env, url.substr(5), path, modes));
    } else if (!env->FileExists(path)) {
      SHARDPACK_RETURN_IF_ERROR(DownloadToFile(env, http, url, path, "", 0, modes));
    }
    local_paths->push_back(path);
  }
  return Status::OK();
}

Status PrepareRemoteAccess(const std::string& location, const std::string& cache_dir, RemoteAccess* access) {
  access->cache_dir = cache_dir;
  if (access->cache_dir.empty()) {
    const char* dir = std::getenv(kCacheEnvVar);
    if (dir != nullptr) access->cache_dir = dir;
  }
  const char* team = std::getenv(kCacheTeamEnvVar);
  access->cache_modes.team = team != nullptr && std::string(team) == "1";
  access->http = HttpOptionsFromEnvironment();
  // user:password@ leaves the URL here, where it enters: no message below can print it, and the
  // client sends it to this host only.
  std::string bare;
  SplitUrlCredentials(location, &access->http.user, &access->http.password, &bare);
  if (location.rfind("s3://", 0) == 0) {
    const char* id = std::getenv("AWS_ACCESS_KEY_ID");
    const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
    if (id == nullptr || *id == '\0' || secret == nullptr || *secret == '\0') {
      return Status::InvalidArgument(location +
                                     " needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                                     "AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL for a store other "
                                     "than AWS)");
    }
    access->http.aws.region = AwsRegion();
    access->http.aws.access_key_id = id;
    access->http.aws.secret_access_key = secret;
    if (const char* token = std::getenv("AWS_SESSION_TOKEN"); token != nullptr) access->http.aws.session_token = token;
  }
  return S3ToHttpUrl(bare, &access->url);
}

namespace {

// What reading `location` whole needs: a cache folder, and a client.
Status RemoteSetup(const std::string& location, RemoteAccess* access, std::unique_ptr<HttpClient>* http) {
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, "", access));
  if (access->cache_dir.empty()) {
    return Status::InvalidArgument("reading " + location + " needs a local cache folder: set " + kCacheEnvVar +
                                   "=DIR (a folder with room for the dataset)");
  }
  *http = NewCurlHttpClient(access->http);
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
  RemoteAccess access;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(location, &access, &http));
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  return CacheRemoteDataset(remote, access.cache_dir, access.cache_modes, /*with_shards=*/true,
                            env ? env : Env::Default(), http.get(), local_dir);
}

Status ResolveShardList(const std::string& spec, Env* env, std::vector<std::string>* local_paths) {
  std::vector<std::string> paths;
  SHARDPACK_RETURN_IF_ERROR(ExpandShardSpec(spec, &paths));
  if (!IsRemoteLocation(spec)) {
    *local_paths = std::move(paths);
    return Status::OK();
  }
  RemoteAccess access;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(spec, &access, &http));
  for (std::string& p : paths) SHARDPACK_RETURN_IF_ERROR(S3ToHttpUrl(RedactUrl(p), &p));
  return CacheRemoteShards(paths, access.cache_dir, access.cache_modes, env ? env : Env::Default(), http.get(),
                           local_paths);
}

}  // namespace shardpack
