// MemoryEnv: an Env whose files live in memory, so fuzz targets can hand input bytes to readers
// that open files by path (the tar reader, the shard indexer) without touching the disk.
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "shardpack/env.h"

namespace shardpack::fuzz {

class MemoryEnv final : public Env {
 public:
  void Put(const std::string& path, std::string bytes) { files_[path] = std::move(bytes); }

  Status NewSequentialFile(const std::string& p, std::unique_ptr<SequentialFile>* f) override {
    const std::string* data = Find(p);
    if (!data) return Status::NotFound(p);
    *f = std::make_unique<Sequential>(*data);
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    const std::string* data = Find(p);
    if (!data) return Status::NotFound(p);
    *f = std::make_unique<RandomAccess>(*data);
    return Status::OK();
  }
  Status ReadFile(const std::string& p, uint64_t max, std::string* c) override {
    const std::string* data = Find(p);
    if (!data) return Status::NotFound(p);
    if (data->size() > max) return Status::InvalidArgument(p + " too large");
    *c = *data;
    return Status::OK();
  }
  Status GetFileSize(const std::string& p, uint64_t* s) override {
    const std::string* data = Find(p);
    if (!data) return Status::NotFound(p);
    *s = data->size();
    return Status::OK();
  }
  bool FileExists(const std::string& p) override { return Find(p) != nullptr; }
  Status NewWritableFile(const std::string& p, std::unique_ptr<WritableFile>*) override { return Unsupported(p); }
  Status ListDir(const std::string& p, std::vector<DirEntry>*) override { return Unsupported(p); }
  Status GetFileId(const std::string& p, FileId*) override { return Unsupported(p); }
  Status CreateDirs(const std::string& p) override { return Unsupported(p); }
  Status RenameFile(const std::string& a, const std::string&) override { return Unsupported(a); }
  Status RemoveFile(const std::string& p) override { return Unsupported(p); }
  Status SyncDir(const std::string& p) override { return Unsupported(p); }

 private:
  class Sequential final : public SequentialFile {
   public:
    explicit Sequential(const std::string& data) : data_(data) {}
    Status Read(size_t n, char* scratch, size_t* got) override {
      *got = std::min(n, data_.size() - pos_);
      std::memcpy(scratch, data_.data() + pos_, *got);
      pos_ += *got;
      return Status::OK();
    }
    Status Skip(uint64_t n) override {
      pos_ = static_cast<size_t>(std::min<uint64_t>(data_.size(), pos_ + n));
      return Status::OK();
    }

   private:
    const std::string& data_;
    size_t pos_ = 0;
  };
  class RandomAccess final : public RandomAccessFile {
   public:
    explicit RandomAccess(const std::string& data) : data_(data) {}
    Status Read(uint64_t offset, size_t n, char* scratch) const override {
      if (offset > data_.size() || n > data_.size() - offset) return Status::DataLoss("read past the end");
      std::memcpy(scratch, data_.data() + offset, n);
      return Status::OK();
    }
    Status Size(uint64_t* size) const override {
      *size = data_.size();
      return Status::OK();
    }

   private:
    const std::string& data_;
  };
  static Status Unsupported(const std::string& p) { return Status::Unsupported(p + ": read-only memory env"); }
  const std::string* Find(const std::string& p) const {
    auto it = files_.find(p);
    return it == files_.end() ? nullptr : &it->second;
  }
  std::map<std::string, std::string> files_;
};

}  // namespace shardpack::fuzz
