#include "storage/remote_shard_list.h"

#include "shardpack/env.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

class GivenShardList final : public RemoteShardList {
 public:
  explicit GivenShardList(std::vector<RemoteShard> shards) : shards_(std::move(shards)) {}
  size_t size() const override { return shards_.size(); }
  std::string_view name(size_t i) const override { return shards_[i].url; }
  uint64_t bytes(size_t i) const override { return shards_[i].bytes; }
  std::string path(size_t i) const override { return shards_[i].path; }
  RemoteShard shard(size_t i) const override { return shards_[i]; }
  bool streaming() const override { return !shards_.empty() && shards_.front().path.empty(); }

 private:
  const std::vector<RemoteShard> shards_;
};

class ManifestShardList final : public RemoteShardList {
 public:
  ManifestShardList(std::string base, std::string cache_dir, std::shared_ptr<const CompactManifest> manifest)
      : base_(std::move(base)), cache_dir_(std::move(cache_dir)), manifest_(std::move(manifest)) {}
  size_t size() const override { return manifest_->shards.size(); }
  std::string_view name(size_t i) const override { return manifest_->shards.file(i); }
  uint64_t bytes(size_t i) const override { return manifest_->shards.bytes(i); }
  std::string path(size_t i) const override {
    return cache_dir_.empty() ? "" : JoinPath(cache_dir_, std::string(manifest_->shards.file(i)));
  }
  RemoteShard shard(size_t i) const override {
    return {RemoteFileUrl(base_, std::string(manifest_->shards.file(i))), path(i), bytes(i),
            std::string(manifest_->shards.xxh64(i))};
  }
  bool streaming() const override { return cache_dir_.empty(); }

 private:
  const std::string base_, cache_dir_;
  const std::shared_ptr<const CompactManifest> manifest_;
};

}  // namespace

std::shared_ptr<const RemoteShardList> NewRemoteShardList(std::vector<RemoteShard> shards) {
  return std::make_shared<GivenShardList>(std::move(shards));
}

std::shared_ptr<const RemoteShardList> NewManifestShardList(std::string base, std::string cache_dir,
                                                            std::shared_ptr<const CompactManifest> manifest) {
  return std::make_shared<ManifestShardList>(std::move(base), std::move(cache_dir), std::move(manifest));
}

}  // namespace shardpack
