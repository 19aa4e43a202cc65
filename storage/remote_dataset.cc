#include "storage/remote_dataset.h"

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
#include "shardpack/manifest.h"
#include "shardpack/shard_spec.h"
#include "storage/cache_folder.h"
#include "storage/http/http_backend.h"
#include "storage/shard_download.h"
#include "storage/storage_backend.h"
#include "storage/url.h"

namespace shardpack {
namespace {

std::vector<SideFile> ShardFiles(const Manifest& m) {
  std::vector<SideFile> files;
  for (const ShardEntry& s : m.shards) files.push_back({s.file, s.xxh64});
  return files;
}

std::vector<SideFile> SmallFiles(const Manifest& m) {
  std::vector<SideFile> files;
  ForEachSmallFile(m, [&](const SideFile& f) { files.push_back(f); });
  return files;
}

}  // namespace

void ForEachSmallFile(const Manifest& m, const std::function<void(const SideFile&)>& visit) {
  for (const ShardEntry& s : m.shards) ForEachSmallFile(s, visit);
}

void ForEachSmallFile(const ShardEntry& s, const std::function<void(const SideFile&)>& visit) {
  if (!s.index.file.empty()) visit(s.index);
  if (!s.sample_table.file.empty()) visit(s.sample_table);
  for (const SideFile& f : s.side_files) visit(f);
}

std::string RemoteFileUrl(const std::string& base, const std::string& name) {
  return base + "/" + UriEncode(name, /*keep_slash=*/true);
}

Status CheckDatasetFileName(const std::string& name) {
  const auto escapes = [](const std::string& n) {
    if (n.empty() || n[0] == '/' || n.find("..") != std::string::npos || MentionsUrl(n) ||
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
  SHARDPACK_RETURN_IF_ERROR(ParseCheckedManifestText(remote->text, manifest_url, &remote->manifest));
  // (Visited in place: copies of 300,000 names, made after the parse's pages were handed back,
  // would leave the heap fragmented.)
  Status named = Status::OK();
  for (const ShardEntry& s : remote->manifest.shards) {
    if (named.ok()) named = CheckDatasetFileName(s.file);
  }
  ForEachSmallFile(remote->manifest, [&](const SideFile& f) {
    if (named.ok()) named = CheckDatasetFileName(f.file);
  });
  SHARDPACK_RETURN_IF_ERROR(named);
  return Status::OK();
}

std::vector<SideFile> RemoteManifest::shard_files() const { return ShardFiles(manifest); }
std::vector<SideFile> RemoteManifest::small_files() const { return SmallFiles(manifest); }

Status PrepareRemoteDatasetFolder(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                                  Env* env, std::string* local_dir) {
  *local_dir = JoinPath(cache_root, BaseName(remote.base) + "-" + ChecksumHex(Xxh64(remote.base)));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, cache_root, modes));
  return PrepareCacheFolder(env, *local_dir, modes);
}

Status CacheRemoteDataset(const RemoteManifest& remote, const std::string& cache_root, const CacheModes& modes,
                          Env* env, HttpClient* http, std::string* local_dir) {
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteDatasetFolder(remote, cache_root, modes, env, local_dir));
  const std::string dir = *local_dir;
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

Status CacheRemoteShards(const std::vector<RemoteShardSource>& shards, const std::string& cache_root,
                         const CacheModes& modes, Env* env, HttpClient* http, std::vector<std::string>* local_paths) {
  local_paths->clear();
  std::string all;
  for (const RemoteShardSource& u : shards) all += u.name + "\n";
  const std::string dir = JoinPath(cache_root, "shards-" + ChecksumHex(Xxh64(all)));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, cache_root, modes));
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, dir, modes));
  std::unique_ptr<FileLock> lock;  // one filler at a time, as for a dataset
  const Status locked = env->LockFile(JoinPath(dir, "fill.lock"), &lock, modes.file());
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  for (const RemoteShardSource& shard : shards) {
    const std::string& url = shard.name;
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
    if (!env->FileExists(path) && !shard.command.empty()) {
      SHARDPACK_RETURN_IF_ERROR(RunPipeToFile(env, shard.command, path, modes));
    } else if (!env->FileExists(path)) {
      SHARDPACK_RETURN_IF_ERROR(DownloadToFile(env, http, shard.url, path, "", 0, modes));
    }
    local_paths->push_back(path);
  }
  return Status::OK();
}

Status PrepareRemoteAccess(const Location& location, const RemoteOptions& options, RemoteAccess* access) {
  access->cache_dir = options.cache_dir;
  access->cache_modes.team = options.cache_team;
  access->http = HttpOptionsFor(options);
  const StorageBackend* backend = location.backend != nullptr ? location.backend : HttpBackend();
  // user:password@ leaves the URL here, where it enters: no message below can print it, and the
  // client sends it to this host only.
  std::string bare;
  SplitUrlCredentials(location.text, &access->http.user, &access->http.password, &bare);
  if (location.remote()) {
    SHARDPACK_RETURN_IF_ERROR(backend->PrepareClient(location, options, &access->http));
    SHARDPACK_RETURN_IF_ERROR(backend->ClientUrl(bare, options, &access->url));
  } else {
    access->url = bare;
  }
  const HttpOptions http = access->http;
  access->new_client = [backend, http] { return backend->NewClient(http); };
  return Status::OK();
}

Status ShardSources(const Location& spec, const RemoteOptions& options, std::vector<RemoteShardSource>* shards) {
  std::vector<std::string> entries;
  SHARDPACK_RETURN_IF_ERROR(ExpandShardSpec(spec.text, &entries));
  shards->clear();
  for (const std::string& e : entries) {
    Location entry;
    SHARDPACK_RETURN_IF_ERROR(ParseLocation(e, &entry));
    RemoteShardSource shard;
    if (entry.pipe()) {
      shard.command = entry.command;
    } else if (entry.remote()) {
      SHARDPACK_RETURN_IF_ERROR(entry.backend->ClientUrl(entry.shown, options, &shard.url));
    } else {
      shard.url = e;
    }
    shard.name = entry.pipe() ? e : shard.url;
    shards->push_back(std::move(shard));
  }
  return Status::OK();
}

namespace {

// What reading `location` whole needs: a cache folder, and a client.
Status RemoteSetup(const Location& location, const RemoteOptions& options, RemoteAccess* access,
                   std::unique_ptr<HttpClient>* http) {
  SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, options, access));
  if (access->cache_dir.empty()) {
    return Status::InvalidArgument("reading " + location.text + " needs a local cache folder: set " + kCacheEnvVar +
                                   "=DIR (a folder with room for the dataset)");
  }
  *http = access->new_client();
  return Status::OK();
}

}  // namespace

Status ResolveDatasetLocation(const Location& location, const RemoteOptions& options, Env* env,
                              std::string* local_dir) {
  if (location.local()) {
    *local_dir = location.text;
    return Status::OK();
  }
  if (location.pipe()) {
    return Status::InvalidArgument(location.text + ": a pipe: command gives WebDataset shards, not a dataset folder; " +
                                   "open it as a shard list (e.g. \"pipe:cat train-{000000..000009}.tar\")");
  }
  RemoteAccess access;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(location, options, &access, &http));
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  return CacheRemoteDataset(remote, access.cache_dir, access.cache_modes, env ? env : Env::Default(), http.get(),
                            local_dir);
}

Status ResolveShardList(const Location& spec, const RemoteOptions& options, Env* env,
                        std::vector<std::string>* local_paths) {
  if (spec.local()) return ExpandShardSpec(spec.text, local_paths);
  RemoteAccess access;
  std::unique_ptr<HttpClient> http;
  SHARDPACK_RETURN_IF_ERROR(RemoteSetup(spec, options, &access, &http));
  std::vector<RemoteShardSource> shards;
  SHARDPACK_RETURN_IF_ERROR(ShardSources(spec, options, &shards));
  return CacheRemoteShards(shards, access.cache_dir, access.cache_modes, env ? env : Env::Default(), http.get(),
                           local_paths);
}

}  // namespace shardpack
