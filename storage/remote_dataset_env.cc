#include "storage/remote_dataset_env.h"

#include "ground/memory_file.h"

namespace shardpack {
namespace {

// A shard read through the store: each read holds the shard (Pin) only while it copies, so that
// the store may drop a shard between reads once the plan has passed it.
class StoreShardFile final : public RandomAccessFile {
 public:
  StoreShardFile(std::shared_ptr<RemoteShardStore> store, size_t shard) : store_(std::move(store)), shard_(shard) {}
  Status Read(uint64_t offset, size_t n, char* scratch) const override {
    std::shared_ptr<const RandomAccessFile> file;
    SHARDPACK_RETURN_IF_ERROR(store_->Pin(shard_, &file));
    return file->Read(offset, n, scratch);
  }

 private:
  const std::shared_ptr<RemoteShardStore> store_;
  const size_t shard_;
};

}  // namespace

RemoteDatasetEnv::RemoteDatasetEnv(Env* base, std::shared_ptr<RemoteShardStore> store,
                                   const std::vector<std::string>& shard_paths, std::vector<uint64_t> sizes,
                                   std::map<std::string, std::string> memory_files, FetchWhole fetch_whole,
                                   std::map<std::string, SideFile> small_files, FetchSmall fetch_small)
    : base_(base),
      store_(std::move(store)),
      sizes_(std::move(sizes)),
      memory_files_(std::move(memory_files)),
      fetch_whole_(std::move(fetch_whole)),
      small_files_(std::move(small_files)),
      fetch_small_(std::move(fetch_small)) {
  for (size_t i = 0; i < shard_paths.size(); ++i) shards_[shard_paths[i]] = i;
}

Status RemoteDatasetEnv::SmallFile(const std::string& path, std::shared_ptr<const ShardBuffer>* bytes) {
  bytes->reset();
  const auto it = small_files_.find(path);
  return fetch_small_ != nullptr && it != small_files_.end() ? fetch_small_(path, it->second, bytes) : Status::OK();
}

long RemoteDatasetEnv::ShardAt(const std::string& path) const {
  const auto it = shards_.find(path);
  return it == shards_.end() ? -1 : long(it->second);
}

Status RemoteDatasetEnv::NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) {
  if (const long shard = ShardAt(path); shard >= 0) {
    *file = std::make_unique<StoreShardFile>(store_, size_t(shard));
    return Status::OK();
  }
  if (const auto it = memory_files_.find(path); it != memory_files_.end()) {
    *file = NewMemoryFile(it->second, path);
    return Status::OK();
  }
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(SmallFile(path, &bytes));
  if (bytes != nullptr) {
    *file = NewMemoryFile(std::move(bytes), path);
    return Status::OK();
  }
  return base_->NewRandomAccessFile(path, file);
}

Status RemoteDatasetEnv::NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) {
  const long shard = ShardAt(path);
  if (shard < 0 || fetch_whole_ == nullptr) return base_->NewSequentialFile(path, file);
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(fetch_whole_(size_t(shard), &bytes));
  const uint64_t size = bytes->size();
  *file = NewSequentialOverRandom(NewMemoryFile(std::move(bytes), path), size);
  return Status::OK();
}

Status RemoteDatasetEnv::ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) {
  const auto it = memory_files_.find(path);
  if (it == memory_files_.end()) {
    std::shared_ptr<const ShardBuffer> bytes;
    SHARDPACK_RETURN_IF_ERROR(SmallFile(path, &bytes));
    if (bytes == nullptr) return base_->ReadFile(path, max_bytes, contents);
    if (bytes->size() > max_bytes) {
      return Status::InvalidArgument(path + " holds more than " + std::to_string(max_bytes) + " bytes");
    }
    return bytes->ReadAll(contents);
  }
  if (it->second.size() > max_bytes) {
    return Status::InvalidArgument(path + " holds more than " + std::to_string(max_bytes) + " bytes");
  }
  *contents = it->second;
  return Status::OK();
}

Status RemoteDatasetEnv::GetFileSize(const std::string& path, uint64_t* size) {
  if (const long shard = ShardAt(path); shard >= 0) {
    *size = sizes_[size_t(shard)];
    return Status::OK();
  }
  if (const auto it = memory_files_.find(path); it != memory_files_.end()) {
    *size = it->second.size();
    return Status::OK();
  }
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(SmallFile(path, &bytes));
  if (bytes != nullptr) {
    *size = bytes->size();
    return Status::OK();
  }
  return base_->GetFileSize(path, size);
}

bool RemoteDatasetEnv::FileExists(const std::string& path) {
  return ShardAt(path) >= 0 || memory_files_.count(path) > 0 || (fetch_small_ != nullptr && small_files_.count(path)) ||
         base_->FileExists(path);
}

}  // namespace shardpack
