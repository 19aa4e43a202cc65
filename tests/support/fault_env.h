// FaultEnv: the POSIX Env with faults injected, for tests of error handling and crash safety (the
// seam leveldb's Env gives its tests). Faults are chosen by path suffix:
//   FailReadsOf      opening or reading fails: "Input/output error"
//   CorruptReadsOf   reads succeed but one byte of what they return is flipped
//   ShortReadsOf     sequential reads return at most 7 bytes at a time (legal, and rarely tested)
//   FailCreationOf   creating the file fails: "No space left on device"
//   FailWritesOf     writes fail once the file would pass `limit` bytes: "No space left on device"
//   FailSyncOf       fsync fails: "Input/output error"
//   FailRenameTo     renaming onto the path fails: "Read-only file system"
//   SlowReadsOf      reading a whole file (ReadFile) first waits this long: slow storage
//   SlowWritesOf     every write (Append, WriteAt) first waits this long: a disk slower than the producer
// and KillAtOperation(n) sends the process SIGKILL at its n-th mutating operation (create, write,
// sync, close, rename, remove, directory sync), for kill-and-resume tests. Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "shardpack/env.h"

namespace shardpack::testing {

class FaultEnv final : public Env {
 public:
  void FailReadsOf(const std::string& suffix) { Add(&failing_reads_, suffix); }
  void CorruptReadsOf(const std::string& suffix) { Add(&corrupt_reads_, suffix); }
  void ShortReadsOf(const std::string& suffix) { Add(&short_reads_, suffix); }
  void FailCreationOf(const std::string& suffix) { Add(&failing_creation_, suffix); }
  void FailWritesOf(const std::string& suffix, uint64_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    write_limits_[suffix] = limit;
  }
  void FailSyncOf(const std::string& suffix) { Add(&failing_syncs_, suffix); }
  void FailRenameTo(const std::string& suffix) { Add(&failing_renames_, suffix); }
  void SlowReadsOf(const std::string& suffix, std::chrono::microseconds delay) {
    Add(&slow_reads_, suffix);
    slow_read_delay_ = delay;
  }
  void SlowWritesOf(const std::string& suffix, std::chrono::microseconds delay) {
    Add(&slow_writes_, suffix);
    slow_write_delay_ = delay;
  }
  void KillAtOperation(uint64_t n) { kill_at_ = n; }
  uint64_t operations() const { return operations_; }

  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>* f) override {
    Operation();
    if (Matches(failing_creation_, p)) return Status::IOError("cannot create " + p + ": No space left on device");
    SHARDPACK_RETURN_IF_ERROR(base_->NewWritableFile(p, f));
    uint64_t limit = UINT64_MAX;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [suffix, l] : write_limits_) {
        if (EndsWith(p, suffix)) limit = l;
      }
    }
    *f = std::make_unique<Writable>(this, p, std::move(*f), limit, Matches(failing_syncs_, p),
                                    Matches(slow_writes_, p) ? slow_write_delay_.load() : std::chrono::microseconds(0));
    return Status::OK();
  }
  Status NewSequentialFile(const std::string& p, std::unique_ptr<SequentialFile>* f) override {
    if (Matches(failing_reads_, p)) return Status::IOError("cannot open " + p + ": Input/output error");
    SHARDPACK_RETURN_IF_ERROR(base_->NewSequentialFile(p, f));
    const bool corrupt = Matches(corrupt_reads_, p), short_reads = Matches(short_reads_, p);
    if (corrupt || short_reads) *f = std::make_unique<Sequential>(std::move(*f), corrupt, short_reads);
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    if (Matches(failing_reads_, p)) return Status::IOError("cannot open " + p + ": Input/output error");
    SHARDPACK_RETURN_IF_ERROR(base_->NewRandomAccessFile(p, f));
    if (Matches(corrupt_reads_, p)) *f = std::make_unique<CorruptRandomAccess>(std::move(*f));
    return Status::OK();
  }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override {
    if (Matches(failing_reads_, p)) return Status::IOError("cannot read " + p + ": Input/output error");
    if (Matches(slow_reads_, p)) std::this_thread::sleep_for(slow_read_delay_);
    SHARDPACK_RETURN_IF_ERROR(base_->ReadFile(p, max, c));
    if (Matches(corrupt_reads_, p) && !c->empty()) (*c)[c->size() / 2] ^= 0x20;
    return Status::OK();
  }
  Status ListDir(const std::string& p, std::vector<DirEntry>* e) override { return base_->ListDir(p, e); }
  Status GetFileId(const std::string& p, FileId* id) override { return base_->GetFileId(p, id); }
  Status GetFileSize(const std::string& p, uint64_t* s) override { return base_->GetFileSize(p, s); }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Status CreateDirs(const std::string& p) override { return base_->CreateDirs(p); }
  Status RenameFile(const std::string& a, const std::string& b) override {
    Operation();
    if (Matches(failing_renames_, b))
      return Status::IOError("cannot rename " + a + " to " + b + ": Read-only file system");
    return base_->RenameFile(a, b);
  }
  Status RemoveFile(const std::string& p) override {
    Operation();
    return base_->RemoveFile(p);
  }
  Status SyncDir(const std::string& p) override {
    Operation();
    return base_->SyncDir(p);
  }

 private:
  class Writable final : public WritableFile {
   public:
    Writable(FaultEnv* env, std::string path, std::unique_ptr<WritableFile> base, uint64_t limit, bool fail_sync,
             std::chrono::microseconds delay)
        : env_(env),
          path_(std::move(path)),
          base_(std::move(base)),
          limit_(limit),
          fail_sync_(fail_sync),
          delay_(delay) {}
    Status Append(std::string_view data) override {
      env_->Operation();
      if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
      SHARDPACK_RETURN_IF_ERROR(Room(size_ + data.size()));
      size_ += data.size();
      return base_->Append(data);
    }
    Status WriteAt(uint64_t offset, std::string_view data) override {
      env_->Operation();
      if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
      SHARDPACK_RETURN_IF_ERROR(Room(offset + data.size()));
      size_ = std::max<uint64_t>(size_, offset + data.size());
      return base_->WriteAt(offset, data);
    }
    Status Sync() override {
      env_->Operation();
      if (fail_sync_) return Status::IOError("cannot sync " + path_ + ": Input/output error");
      return base_->Sync();
    }
    Status Close() override {
      env_->Operation();
      return base_->Close();
    }

   private:
    Status Room(uint64_t end) const {
      if (end <= limit_) return Status::OK();
      return Status::IOError("cannot write " + path_ + ": No space left on device");
    }
    FaultEnv* env_;
    std::string path_;
    std::unique_ptr<WritableFile> base_;
    uint64_t limit_, size_ = 0;
    bool fail_sync_;
    std::chrono::microseconds delay_;
  };

  class Sequential final : public SequentialFile {
   public:
    Sequential(std::unique_ptr<SequentialFile> base, bool corrupt, bool short_reads)
        : base_(std::move(base)), corrupt_(corrupt), short_(short_reads) {}
    Status Read(size_t n, char* scratch, size_t* got) override {
      SHARDPACK_RETURN_IF_ERROR(base_->Read(short_ ? std::min<size_t>(n, 7) : n, scratch, got));
      if (corrupt_ && *got > 0 && !flipped_) {
        scratch[*got / 2] ^= 0x20;
        flipped_ = true;
      }
      return Status::OK();
    }

   private:
    std::unique_ptr<SequentialFile> base_;
    bool corrupt_, short_, flipped_ = false;
  };

  class CorruptRandomAccess final : public RandomAccessFile {
   public:
    explicit CorruptRandomAccess(std::unique_ptr<RandomAccessFile> base) : base_(std::move(base)) {}
    Status Read(uint64_t offset, size_t n, char* scratch) const override {
      SHARDPACK_RETURN_IF_ERROR(base_->Read(offset, n, scratch));
      if (n > 0) scratch[n / 2] ^= 0x20;
      return Status::OK();
    }
    Status Size(uint64_t* size) const override { return base_->Size(size); }
    uint64_t memory_bytes() const override { return base_->memory_bytes(); }

   private:
    std::unique_ptr<RandomAccessFile> base_;
  };

  static bool EndsWith(const std::string& path, const std::string& suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  void Add(std::set<std::string>* set, const std::string& suffix) {
    std::lock_guard<std::mutex> lock(mu_);
    set->insert(suffix);
  }
  bool Matches(const std::set<std::string>& suffixes, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& s : suffixes) {
      if (EndsWith(path, s)) return true;
    }
    return false;
  }
  void Operation() {
    const uint64_t n = ++operations_;
    if (kill_at_ != 0 && n == kill_at_) std::raise(SIGKILL);
  }

  Env* base_ = Env::Default();
  std::mutex mu_;
  std::set<std::string> failing_reads_, corrupt_reads_, short_reads_, failing_creation_, failing_syncs_,
      failing_renames_, slow_reads_, slow_writes_;
  std::chrono::microseconds slow_read_delay_{0};  // set before use, like the other faults
  std::atomic<std::chrono::microseconds> slow_write_delay_{std::chrono::microseconds(0)};
  std::map<std::string, uint64_t> write_limits_;
  std::atomic<uint64_t> operations_{0};
  std::atomic<uint64_t> kill_at_{0};
};

}  // namespace shardpack::testing
