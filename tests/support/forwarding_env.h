// ForwardingEnv: the POSIX Env, every method passed on, for a test to override the one it needs
// to change (a file system that reports itself as NFS, a file that vanishes before it is opened).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardpack/env.h"

namespace shardpack::testing {

class ForwardingEnv : public Env {
 public:
  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    return base_->NewWritableFile(p, f);
  }
  Status NewUnbufferedWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    return base_->NewUnbufferedWritableFile(p, f);
  }
  Status NewSequentialFile(const std::string& p, std::unique_ptr<SequentialFile>* f) override {
    return base_->NewSequentialFile(p, f);
  }
  Status NewAppendableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    return base_->NewAppendableFile(p, f);
  }
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    return base_->NewRandomAccessFile(p, f);
  }
  Status MapFile(const std::string& p, std::unique_ptr<MappedFile>* f) override { return base_->MapFile(p, f); }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override { return base_->ReadFile(p, max, c); }
  Status ListDir(const std::string& p, std::vector<DirEntry>* e) override { return base_->ListDir(p, e); }
  Status GetFileId(const std::string& p, FileId* id) override { return base_->GetFileId(p, id); }
  Status GetFileSize(const std::string& p, uint64_t* s) override { return base_->GetFileSize(p, s); }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Status CreateDirs(const std::string& p) override { return base_->CreateDirs(p); }
  Status RenameFile(const std::string& a, const std::string& b) override { return base_->RenameFile(a, b); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Status SyncDir(const std::string& p) override { return base_->SyncDir(p); }
  Status StatPath(const std::string& p, FileStat* s) override { return base_->StatPath(p, s); }
  Status CreateDir(const std::string& p, uint32_t mode) override { return base_->CreateDir(p, mode); }
  Status NewExclusiveFile(const std::string& p, uint32_t mode, std::unique_ptr<WritableFile>* f) override {
    return base_->NewExclusiveFile(p, mode, f);
  }
  Status RemoveEmptyDir(const std::string& p) override { return base_->RemoveEmptyDir(p); }

  Status FileSystemType(const std::string& p, std::string* type, bool* network) override {
    return base_->FileSystemType(p, type, network);
  }
  Status LockFile(const std::string& p, std::unique_ptr<FileLock>* lock, uint32_t mode) override {
    return base_->LockFile(p, lock, mode);
  }
  Status TryLockFile(const std::string& p, bool shared, std::unique_ptr<FileLock>* lock, bool* acquired,
                     uint32_t mode) override {
    return base_->TryLockFile(p, shared, lock, acquired, mode);
  }
  Status TryLockFolder(const std::string& p, std::unique_ptr<FileLock>* lock, bool* acquired) override {
    return base_->TryLockFolder(p, lock, acquired);
  }

 protected:
  Env* const base_ = Env::Default();
};

}  // namespace shardpack::testing
