#include "formats/common/shard_check.h"

#include "ground/checksum.h"

namespace shardpack {

bool LoadSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                          uint64_t max_bytes, ShardCheck* check, std::string* contents) {
  const Status s = env->ReadFile(JoinPath(dir, side.file), max_bytes, contents);
  if (!s.ok()) {
    check->AddProblem(shard, "", side.file + ": " + s.message());
    return false;
  }
  if (ChecksumHex(Xxh64(*contents)) != side.xxh64) {
    check->AddProblem(shard, "", side.file + ": checksum mismatch (file changed since pack)");
  }
  return true;
}

bool ChecksumSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                              ShardCheck* check, uint64_t* size) {
  uint64_t xxh64 = 0;
  const Status s = ChecksumFile(env, JoinPath(dir, side.file), &xxh64, size);
  if (!s.ok()) {
    check->AddProblem(shard, "", side.file + ": " + s.message());
    return false;
  }
  if (ChecksumHex(xxh64) != side.xxh64) {
    check->AddProblem(shard, "", side.file + ": checksum mismatch (file changed since pack)");
  }
  return true;
}

}  // namespace shardpack
