// RemoteDatasetEnv: the Env through which a format's reader reads a remote dataset without a full
// download first. The readers open every shard when they open the dataset, but read it only when a
// sample of it is wanted; this Env answers the opening from the manifest (size, existence) and
// fetches the shard at the first read, through a RemoteShardStore. Small files (indexes, sample
// tables, other side files) are fetched when a reader first reads one (FetchSmall): into the cache
// folder, read from there, or, in streaming mode, into memory for that reader. In ranged mode (a
// reader that reads at random without a cache folder), shards and small files are opened to be
// read a range at a time (OpenRanged: storage/http/http_range_file.h), and the store downloads
// nothing. Everything else goes to the base Env.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ground/name_index.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "storage/remote_shard_store.h"

namespace shardpack {

// The files a RemoteDatasetEnv answers for, by name within `dir` (a path is dir + "/" + name; with
// `dir` empty, the name is the whole path). Names and checksums are not held here again: the
// indexes give a number, and the shard list or small_file tell whether it is the name asked for
// (ground/name_index.h), 24 bytes a shard for a dataset of 100,000.
struct RemoteFiles {
  std::string dir;
  NameIndex shards;  // -> the shard's number in the store (named by its RemoteShardList::name)
  NameIndex small;   // indexes, sample tables, side files -> a number small_file takes
  // Whether a small file added with `number` is called `name`, and then *file: its name (within
  // dir) and the manifest's xxh64 of it.
  std::function<bool(uint32_t number, std::string_view name, SideFile* file)> small_file;
};

class RemoteDatasetEnv final : public Env {
 public:
  // fetch_whole: downloads shard i into memory for a reader that reads it front to back (indexing
  // a shard list's tar headers), apart from the store; empty: such reads go to the base Env.
  using FetchWhole = std::function<Status(size_t shard, std::shared_ptr<const ShardBuffer>* bytes)>;
  // files.small: fetched on first use by fetch_small (with the path and the manifest's entry),
  // which leaves the file checked in the base Env (*bytes null) or gives its checked bytes
  // (streaming).
  // Thread-safe: readers load shards from several threads.
  using FetchSmall =
      std::function<Status(const std::string& path, const SideFile& file, std::shared_ptr<const ShardBuffer>* bytes)>;
  // open_ranged: opens shard `shard` (small null) or the small file `small` at `path`, to be read by
  // range requests; empty: not ranged mode.
  using OpenRanged = std::function<Status(size_t shard, const SideFile* small, const std::string& path,
                                          std::unique_ptr<RandomAccessFile>* file)>;
  RemoteDatasetEnv(Env* base, std::shared_ptr<RemoteShardStore> store, RemoteFiles files,
                   FetchWhole fetch_whole = nullptr, FetchSmall fetch_small = nullptr,
                   OpenRanged open_ranged = nullptr);

  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override;
  Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  bool FileExists(const std::string& path) override;

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    return base_->NewWritableFile(path, file);
  }
  Status NewUnbufferedWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    return base_->NewUnbufferedWritableFile(path, file);
  }
  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) override;
  Status ListDir(const std::string& path, std::vector<DirEntry>* entries) override {
    return base_->ListDir(path, entries);
  }
  Status GetFileId(const std::string& path, FileId* id) override { return base_->GetFileId(path, id); }
  Status CreateDirs(const std::string& path) override { return base_->CreateDirs(path); }
  Status RenameFile(const std::string& from, const std::string& to) override { return base_->RenameFile(from, to); }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status SyncDir(const std::string& path) override { return base_->SyncDir(path); }
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    return base_->LockFile(path, lock, mode);
  }
  Status TryLockFile(const std::string& path, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                     uint32_t mode) override {
    return base_->TryLockFile(path, shared, lock, acquired, mode);
  }
  Status TryLockFolder(const std::string& dir, std::unique_ptr<FileLock>* lock, bool* acquired) override {
    return base_->TryLockFolder(dir, lock, acquired);
  }
  Status StatPath(const std::string& path, FileStat* stat) override { return base_->StatPath(path, stat); }
  Status CreateDir(const std::string& path, uint32_t mode) override { return base_->CreateDir(path, mode); }
  Status NewExclusiveFile(const std::string& path, uint32_t mode, std::unique_ptr<WritableFile>* file) override {
    return base_->NewExclusiveFile(path, mode, file);
  }
  Status FileSystemType(const std::string& path, std::string* type, bool* network) override {
    return base_->FileSystemType(path, type, network);
  }

 private:
  // The shard at `path`, or -1.
  long ShardAt(const std::string& path) const;
  // The name of `path` in files_, false when it is not in files_.dir.
  bool NameOf(const std::string& path, std::string_view* name) const;
  // The small file at `path`: true and *file (its manifest entry).
  bool FindSmall(const std::string& path, SideFile* file) const;
  // When `path` is a small file: fetched (fetch_small), *bytes its bytes when they are in memory.
  // *bytes null for any other path, or when the base Env has the file.
  Status SmallFile(const std::string& path, std::shared_ptr<const ShardBuffer>* bytes);

  Env* const base_;
  const std::shared_ptr<RemoteShardStore> store_;
  const RemoteFiles files_;
  const FetchWhole fetch_whole_;
  const FetchSmall fetch_small_;
  const OpenRanged open_ranged_;
};

}  // namespace shardpack
