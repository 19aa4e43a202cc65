// FaultEnv: the POSIX Env with reads of chosen paths failing, for tests of error handling.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "shardpack/env.h"

namespace shardpack::testing {

class FaultEnv final : public Env {
 public:
  // Reads of a path ending in `suffix` fail with an I/O error ("Input/output error").
  void FailReadsOf(const std::string& suffix) {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert(suffix);
  }

  // Creating a file whose path ends in `suffix` fails with "No space left on device".
  void FailCreationOf(const std::string& suffix) {
    std::lock_guard<std::mutex> lock(mu_);
    failing_creation_.insert(suffix);
  }

  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    if (Matches(failing_creation_, p)) return Status::IOError("cannot create " + p + ": No space left on device");
    return base_->NewWritableFile(p, f);
  }
  Status NewSequentialFile(const std::string& p, std::unique_ptr<SequentialFile>* f) override {
    if (Matches(failing_, p)) return Status::IOError("cannot open " + p + ": Input/output error");
    return base_->NewSequentialFile(p, f);
  }
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    if (Matches(failing_, p)) return Status::IOError("cannot open " + p + ": Input/output error");
    return base_->NewRandomAccessFile(p, f);
  }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override {
    if (Matches(failing_, p)) return Status::IOError("cannot read " + p + ": Input/output error");
    return base_->ReadFile(p, max, c);
  }
  Status ListDir(const std::string& p, std::vector<DirEntry>* e) override { return base_->ListDir(p, e); }
  Status GetFileId(const std::string& p, FileId* id) override { return base_->GetFileId(p, id); }
  Status GetFileSize(const std::string& p, uint64_t* s) override { return base_->GetFileSize(p, s); }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Status CreateDirs(const std::string& p) override { return base_->CreateDirs(p); }
  Status RenameFile(const std::string& a, const std::string& b) override { return base_->RenameFile(a, b); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Status SyncDir(const std::string& p) override { return base_->SyncDir(p); }

 private:
  bool Matches(const std::set<std::string>& suffixes, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& s : suffixes) {
      if (path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0) return true;
    }
    return false;
  }

  Env* base_ = Env::Default();
  std::mutex mu_;
  std::set<std::string> failing_;
  std::set<std::string> failing_creation_;
};

}  // namespace shardpack::testing
