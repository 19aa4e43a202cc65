#include "storage/shard_download.h"

#include <unistd.h>

#include "ground/checksum.h"
#include "storage/cache_folder.h"

namespace shardpack {
namespace {

constexpr int kChecksumTries = 3;

Status ChecksumMismatch(const std::string& url) {
  return Status::DataLoss(url + " does not match the checksum its manifest lists");
}

// Whether `received` bytes so far may still be the file: within its size, when one is known.
Status WithinSize(const std::string& url, uint64_t received, uint64_t max_bytes) {
  if (max_bytes == 0 || received <= max_bytes) return Status::OK();
  return Status::IOError(url + " sends more than the " + std::to_string(max_bytes) +
                         " bytes expected of it: stopped there (the server holds another version of the file, "
                         "or is broken)");
}

// Repeats `download` while the bytes that arrive do not match their checksum.
template <typename Download>
Status RepeatOnDataLoss(Download download) {
  Status s;
  for (int i = 0; i < kChecksumTries; ++i) {
    s = download();
    if (s.code() != Status::Code::kDataLoss) return s;
  }
  return s.WithSuffix(", in " + std::to_string(kChecksumTries) +
                      " downloads (the server holds a damaged or changed copy)");
}

Status DownloadOnce(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                    const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  // A new file, never one found under that name: a leftover of a killed process with this pid, or
  // a name planted there (a link is removed, not followed).
  const auto create = [&](std::unique_ptr<WritableFile>* file) {
    (void)env->RemoveFile(part);
    return env->NewExclusiveFile(part, modes.file(), file);
  };
  std::unique_ptr<WritableFile> file;
  StreamingXxh64 hash;
  uint64_t received = 0;
  Status s = create(&file);
  if (s.ok()) {
    s = http->Get(
        url,
        [&](std::string_view data) {
          if (file == nullptr) return Status::IOError("cannot reopen " + part);
          SHARDPACK_RETURN_IF_ERROR(WithinSize(url, received + data.size(), max_bytes));
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
            if (!create(&file).ok()) file.reset();
          }
          return received;
        });
  }
  if (s.ok() && file == nullptr) s = Status::IOError("cannot reopen " + part);
  // Durable before it takes its name: after a machine crash the cache holds the checked bytes or
  // no file, never a published name over lost pages (readers do not re-hash whole shards).
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok() && !xxh64.empty() && ChecksumHex(hash.Digest()) != xxh64) s = ChecksumMismatch(url);
  if (s.ok()) s = env->RenameFile(part, path);
  if (!s.ok()) (void)env->RemoveFile(part);
  return s;
}

}  // namespace

Status DownloadToFile(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                      const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes) {
  SHARDPACK_RETURN_IF_ERROR(
      RepeatOnDataLoss([&] { return DownloadOnce(env, http, url, path, xxh64, max_bytes, modes); }));
  // The bytes were hashed as they arrived: recorded as checked, so that no process hashes them again.
  if (!xxh64.empty()) return RecordCheckedCopy(env, path, xxh64, modes);
  return Status::OK();
}

Status DownloadToMemory(HttpClient* http, const std::string& url, const std::string& xxh64, uint64_t max_bytes,
                        ShardBuffer* bytes) {
  return RepeatOnDataLoss([&] {
    // Hashed as the bytes arrive, while they are in the processor's cache, not read back after.
    StreamingXxh64 hash;
    bytes->Clear();
    Status s = http->Get(
        url,
        [&](std::string_view data) {
          SHARDPACK_RETURN_IF_ERROR(WithinSize(url, bytes->size() + data.size(), max_bytes));
          hash.Update(data);
          return bytes->Append(data);
        },
        [&](bool from_start) -> uint64_t {
          // As in DownloadOnce: continue after the bytes kept (hashed already), or start over.
          if (from_start) {
            hash.Reset();
            bytes->Clear();
          }
          return bytes->size();
        });
    if (s.ok() && !xxh64.empty() && ChecksumHex(hash.Digest()) != xxh64) s = ChecksumMismatch(url);
    if (!s.ok()) bytes->Clear();
    return s;
  });
}

Status FetchIntoCache(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                      const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes) {
  if (IsUsableCopy(env, path, xxh64)) return Status::OK();
  std::unique_ptr<FileLock> lock;
  const Status locked = env->LockFile(path + ".lock", &lock, modes.file());
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  return FetchIntoCacheLocked(env, http, url, path, xxh64, max_bytes, modes);
}

bool IsUsableCopy(Env* env, const std::string& path, const std::string& xxh64) {
  // Without a checksum (a shard list) a published name is all there is to go by.
  return xxh64.empty() ? env->FileExists(path) : IsCheckedCopy(env, path, xxh64);
}

Status FetchIntoCacheLocked(Env* env, HttpClient* http, const std::string& url, const std::string& path,
                            const std::string& xxh64, uint64_t max_bytes, const CacheModes& modes) {
  if (IsUsableCopy(env, path, xxh64)) return Status::OK();  // another process downloaded or checked it
  if (!xxh64.empty()) {
    // Found without a valid record (an earlier version's cache, a changed or planted file): hashed
    // once, under the lock, and kept only when it holds the manifest's bytes.
    bool good = false;
    SHARDPACK_RETURN_IF_ERROR(CheckCachedCopy(env, path, xxh64, modes, &good));
    if (good) return Status::OK();
  }
  return DownloadToFile(env, http, url, path, xxh64, max_bytes, modes);
}

}  // namespace shardpack
