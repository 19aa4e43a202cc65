#include "formats/common/shard_file.h"

#include <string_view>

#include "ground/checksum.h"

namespace shardpack {

Status OpenShardFile(Env* env, const std::string& dir, const ShardEntry& shard, std::unique_ptr<RandomAccessFile>* file,
                     uint64_t* bytes) {
  const std::string path = JoinPath(dir, shard.file);
  SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(path, bytes));
  if (*bytes != shard.bytes) {
    return Status::DataLoss(path + " is " + std::to_string(*bytes) + " bytes, the manifest says " +
                            std::to_string(shard.bytes) + " (run shardpack verify)");
  }
  return env->NewRandomAccessFile(path, file);
}

Status OpenShardWithTable(Env* env, const std::string& dir, const ShardEntry& shard, OpenedShard* opened) {
  SHARDPACK_RETURN_IF_ERROR(ReadSampleTable(env, dir, shard, &opened->table));
  return OpenShardFile(env, dir, shard, &opened->file, &opened->bytes);
}

Status CheckWithinShard(const ShardEntry& shard, const std::string& key, uint64_t offset, uint64_t size,
                        uint64_t shard_bytes) {
  return CheckWithinShard(shard.file, key, offset, size, shard_bytes);
}

Status CheckWithinShard(const std::string& shard_file, const std::string& key, uint64_t offset, uint64_t size,
                        uint64_t shard_bytes) {
  if (offset <= shard_bytes && size <= shard_bytes - offset) return Status::OK();
  return Status::DataLoss(shard_file + ": sample " + key + " claims " + std::to_string(size) + " bytes at offset " +
                          std::to_string(offset) + ", past the end of the shard (" + std::to_string(shard_bytes) +
                          " bytes; run shardpack verify)");
}

Status ReadCheckedSample(const RandomAccessFile& file, const std::string& shard_file, const std::string& key,
                         uint64_t offset, size_t size, uint64_t xxh64, char* out) {
  constexpr int kReads = 3;
  for (int read = 1;; ++read) {
    SHARDPACK_RETURN_IF_ERROR(file.Read(offset, size, out));
    if (Xxh64(std::string_view(out, size)) == xxh64) return Status::OK();
    if (read == kReads) {
      return Status::DataLoss(shard_file + ": sample " + key +
                              " does not match the checksum its sample table lists, in " + std::to_string(kReads) +
                              " reads (the server holds a damaged or changed copy; run shardpack verify)");
    }
  }
}

}  // namespace shardpack
