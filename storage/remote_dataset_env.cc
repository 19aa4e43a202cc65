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
  Status Size(uint64_t* size) const override {
    *size = store_->shards().bytes(shard_);
    return Status::OK();
  }

 private:
  const std::shared_ptr<RemoteShardStore> store_;
  const size_t shard_;
};

}  // namespace

RemoteDatasetEnv::RemoteDatasetEnv(Env* base, std::shared_ptr<RemoteShardStore> store, RemoteFiles files,
                                   FetchWhole fetch_whole, FetchSmall fetch_small, OpenRanged open_ranged)
    : base_(base),
      store_(std::move(store)),
      files_(std::move(files)),
      fetch_whole_(std::move(fetch_whole)),
      fetch_small_(std::move(fetch_small)),
      open_ranged_(std::move(open_ranged)) {}

bool RemoteDatasetEnv::NameOf(const std::string& path, std::string_view* name) const {
  *name = path;
  if (files_.dir.empty()) return true;
  if (path.size() <= files_.dir.size() || path.compare(0, files_.dir.size(), files_.dir) != 0 ||
      path[files_.dir.size()] != '/') {
    return false;
  }
  name->remove_prefix(files_.dir.size() + 1);
  return true;
}

bool RemoteDatasetEnv::FindSmall(const std::string& path, SideFile* file) const {
  std::string_view name;
  if (fetch_small_ == nullptr || files_.small_file == nullptr || !NameOf(path, &name)) return false;
  const auto is_named = [&](uint32_t i) { return files_.small_file(i, name, file); };
  uint32_t number = 0;
  return files_.small.Find(name, is_named, &number);
}

Status RemoteDatasetEnv::SmallFile(const std::string& path, std::shared_ptr<const ShardBuffer>* bytes) {
  bytes->reset();
  SideFile file;
  return FindSmall(path, &file) ? fetch_small_(path, file, bytes) : Status::OK();
}

long RemoteDatasetEnv::ShardAt(const std::string& path) const {
  std::string_view name;
  uint32_t shard = 0;
  const RemoteShardList& shards = store_->shards();
  const auto is_named = [&](uint32_t i) { return shards.name(i) == name; };
  return NameOf(path, &name) && files_.shards.Find(name, is_named, &shard) ? long(shard) : -1;
}

Status RemoteDatasetEnv::NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) {
  if (const long shard = ShardAt(path); shard >= 0) {
    if (open_ranged_ != nullptr) return open_ranged_(size_t(shard), nullptr, path, file);
    *file = std::make_unique<StoreShardFile>(store_, size_t(shard));
    return Status::OK();
  }
  if (SideFile small; open_ranged_ != nullptr && FindSmall(path, &small)) return open_ranged_(0, &small, path, file);
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
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(SmallFile(path, &bytes));
  if (bytes == nullptr) return base_->ReadFile(path, max_bytes, contents);
  if (bytes->size() > max_bytes) {
    return Status::InvalidArgument(path + " holds more than " + std::to_string(max_bytes) + " bytes");
  }
  return bytes->ReadAll(contents);
}

Status RemoteDatasetEnv::GetFileSize(const std::string& path, uint64_t* size) {
  if (const long shard = ShardAt(path); shard >= 0) {
    *size = store_->shards().bytes(size_t(shard));
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
  SideFile file;
  return ShardAt(path) >= 0 || FindSmall(path, &file) || base_->FileExists(path);
}

}  // namespace shardpack
