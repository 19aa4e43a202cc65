// StreamedDatasetEnv: a dataset at a URL read without a cache folder by code that reads files
// (verify, stat): the manifest and the small files (indexes, sample tables, side files) are
// fetched into memory when it opens, each checked against the manifest's XXH64; a shard is
// downloaded into memory (checked) when it is opened, and dropped when the last file reading it is
// gone. Hold keeps a shard in memory across several openings (verify reads a shard twice: its
// checksums, then its structure), so that each shard is downloaded once. Memory: the small files
// plus the shards held or open at once. The folder is the URL; other paths go to the base Env.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ground/shard_buffer.h"
#include "shardpack/env.h"
#include "storage/http/http_client.h"
#include "storage/remote_dataset.h"

namespace shardpack {

class StreamedDatasetEnv final : public Env {
 public:
  using NewClient = std::function<std::unique_ptr<HttpClient>()>;
  // Fetches the small files of `remote` into memory; errors of the downloads.
  static Status Open(Env* base, const RemoteManifest& remote, NewClient new_client,
                     std::unique_ptr<StreamedDatasetEnv>* env);

  // Downloads the shard at `path` (checked) and keeps it in memory until *hold is released.
  Status Hold(const std::string& path, std::shared_ptr<void>* hold);

  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override;
  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) override;
  Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  bool FileExists(const std::string& path) override;
  Status ListDir(const std::string& path, std::vector<DirEntry>* entries) override;

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    return base_->NewWritableFile(path, file);
  }
  Status GetFileId(const std::string& path, FileId* id) override { return base_->GetFileId(path, id); }
  Status CreateDirs(const std::string& path) override { return base_->CreateDirs(path); }
  Status RenameFile(const std::string& from, const std::string& to) override { return base_->RenameFile(from, to); }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status SyncDir(const std::string& path) override { return base_->SyncDir(path); }

 private:
  struct Shard {
    std::string url, xxh64;
    uint64_t bytes = 0;
  };
  StreamedDatasetEnv(Env* base, std::string dir, NewClient new_client)
      : base_(base), dir_(std::move(dir)), new_client_(std::move(new_client)) {}
  // The shard's bytes: held ones shared, others downloaded now.
  Status Bytes(const std::string& path, const Shard& shard, std::shared_ptr<const ShardBuffer>* bytes);

  Env* const base_;
  const std::string dir_;
  const NewClient new_client_;
  std::map<std::string, std::string> small_files_;  // path -> contents
  std::map<std::string, Shard> shards_;             // path -> where
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const ShardBuffer>> held_;  // Hold: while its holder lives
};

}  // namespace shardpack
