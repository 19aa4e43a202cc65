#include "storage/streamed_dataset_env.h"

#include "ground/memory_file.h"
#include "storage/shard_download.h"

namespace shardpack {

Status StreamedDatasetEnv::Open(Env* base, const RemoteManifest& remote, NewClient new_client,
                                std::unique_ptr<StreamedDatasetEnv>* env) {
  std::unique_ptr<StreamedDatasetEnv> e(new StreamedDatasetEnv(base, remote.base, std::move(new_client)));
  std::unique_ptr<HttpClient> http = e->new_client_();
  e->small_files_[JoinPath(remote.base, kManifestFileName)] = remote.text;
  for (const SideFile& f : remote.small_files()) {
    ShardBuffer bytes;
    SHARDPACK_RETURN_IF_ERROR(
        DownloadToMemory(http.get(), RemoteFileUrl(remote.base, f.file), f.xxh64, kMaxSmallFileBytes, &bytes));
    SHARDPACK_RETURN_IF_ERROR(bytes.ReadAll(&e->small_files_[JoinPath(remote.base, f.file)]));
  }
  for (const ShardEntry& s : remote.manifest.shards) {
    e->shards_[JoinPath(remote.base, s.file)] = {RemoteFileUrl(remote.base, s.file), s.xxh64, s.bytes};
  }
  *env = std::move(e);
  return Status::OK();
}

Status StreamedDatasetEnv::Bytes(const std::string& path, const Shard& shard,
                                 std::shared_ptr<const ShardBuffer>* bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = held_.find(path); it != held_.end()) *bytes = it->second.lock();
  }
  if (*bytes != nullptr) return Status::OK();
  auto buffer = std::make_shared<ShardBuffer>();
  std::unique_ptr<HttpClient> http = new_client_();
  SHARDPACK_RETURN_IF_ERROR(DownloadToMemory(http.get(), shard.url, shard.xxh64, shard.bytes, buffer.get()));
  *bytes = std::move(buffer);
  return Status::OK();
}

Status StreamedDatasetEnv::Hold(const std::string& path, std::shared_ptr<void>* hold) {
  const auto it = shards_.find(path);
  if (it == shards_.end()) return Status::OK();  // not a shard: nothing to hold
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(Bytes(path, it->second, &bytes));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto h = held_.begin(); h != held_.end();) h = h->second.expired() ? held_.erase(h) : std::next(h);
  held_[path] = bytes;
  *hold = std::const_pointer_cast<ShardBuffer>(bytes);
  return Status::OK();
}

Status StreamedDatasetEnv::NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) {
  if (const auto it = small_files_.find(path); it != small_files_.end()) {
    *file = NewMemoryFile(it->second, path);
    return Status::OK();
  }
  const auto it = shards_.find(path);
  if (it == shards_.end()) return base_->NewRandomAccessFile(path, file);
  std::shared_ptr<const ShardBuffer> bytes;
  SHARDPACK_RETURN_IF_ERROR(Bytes(path, it->second, &bytes));
  *file = NewMemoryFile(std::move(bytes), it->second.url);
  return Status::OK();
}

Status StreamedDatasetEnv::NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) {
  uint64_t size = 0;
  if (!small_files_.count(path) && !shards_.count(path)) return base_->NewSequentialFile(path, file);
  SHARDPACK_RETURN_IF_ERROR(GetFileSize(path, &size));
  std::unique_ptr<RandomAccessFile> random;
  SHARDPACK_RETURN_IF_ERROR(NewRandomAccessFile(path, &random));
  *file = NewSequentialOverRandom(std::move(random), size);
  return Status::OK();
}

Status StreamedDatasetEnv::ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) {
  uint64_t size = 0;
  if (!small_files_.count(path) && !shards_.count(path)) return base_->ReadFile(path, max_bytes, contents);
  SHARDPACK_RETURN_IF_ERROR(GetFileSize(path, &size));
  if (size > max_bytes) {
    return Status::InvalidArgument(path + " holds " + std::to_string(size) + " bytes, more than the limit of " +
                                   std::to_string(max_bytes));
  }
  std::unique_ptr<RandomAccessFile> file;
  SHARDPACK_RETURN_IF_ERROR(NewRandomAccessFile(path, &file));
  contents->resize(size_t(size));
  return size == 0 ? Status::OK() : file->Read(0, size_t(size), contents->data());
}

Status StreamedDatasetEnv::GetFileSize(const std::string& path, uint64_t* size) {
  if (const auto it = small_files_.find(path); it != small_files_.end()) {
    *size = it->second.size();
    return Status::OK();
  }
  if (const auto it = shards_.find(path); it != shards_.end()) {
    *size = it->second.bytes;
    return Status::OK();
  }
  return base_->GetFileSize(path, size);
}

bool StreamedDatasetEnv::FileExists(const std::string& path) {
  return small_files_.count(path) > 0 || shards_.count(path) > 0 || base_->FileExists(path);
}

Status StreamedDatasetEnv::ListDir(const std::string& path, std::vector<DirEntry>* entries) {
  if (path != dir_) return base_->ListDir(path, entries);
  // The folder holds what its manifest lists (a URL has no listing to trust more).
  entries->clear();
  const auto add = [&](const std::string& p) {
    if (p.rfind(dir_ + "/", 0) == 0 && p.find('/', dir_.size() + 1) == std::string::npos) {
      entries->push_back({p.substr(dir_.size() + 1), DirEntry::Type::kFile, false});
    }
  };
  for (const auto& [p, contents] : small_files_) add(p);
  for (const auto& [p, shard] : shards_) add(p);
  return Status::OK();
}

}  // namespace shardpack
