#include "ops/shard_download.h"

#include <unistd.h>

#include "ground/checksum.h"

namespace shardpack {
namespace {

constexpr int kChecksumTries = 3;

Status ChecksumMismatch(const std::string& url) {
  return Status::DataLoss(url + " does not match the checksum its manifest lists");
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
                    const std::string& xxh64) {
  const std::string part = path + ".part-" + std::to_string(::getpid());
  std::unique_ptr<WritableFile> file;
  StreamingXxh64 hash;
  uint64_t received = 0;
  Status s = env->NewUnbufferedWritableFile(part, &file);
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
            if (!env->NewUnbufferedWritableFile(part, &file).ok()) file.reset();
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
                      const std::string& xxh64) {
  return RepeatOnDataLoss([&] { return DownloadOnce(env, http, url, path, xxh64); });
}

Status DownloadToMemory(HttpClient* http, const std::string& url, const std::string& xxh64, ShardBuffer* bytes) {
  return RepeatOnDataLoss([&] {
    // Hashed as the bytes arrive, while they are in the processor's cache, not read back after.
    StreamingXxh64 hash;
    bytes->Clear();
    Status s = http->Get(
        url,
        [&](std::string_view data) {
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
                      const std::string& xxh64) {
  if (env->FileExists(path)) return Status::OK();  // a published name was checked when it was taken
  std::unique_ptr<FileLock> lock;
  const Status locked = env->LockFile(path + ".lock", &lock);
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  if (env->FileExists(path)) return Status::OK();  // another process downloaded it meanwhile
  return DownloadToFile(env, http, url, path, xxh64);
}

}  // namespace shardpack
