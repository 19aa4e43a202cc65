#include "ground/side_file.h"

#include "ground/checksum.h"

namespace shardpack {

Status PublishSideFile(Env* env, const std::string& dir, const std::string& file, const std::string& contents,
                       bool sync, SideFile* entry) {
  entry->file = file;
  entry->xxh64 = ChecksumHex(Xxh64(contents));
  const std::string path = JoinPath(dir, file);
  return WriteFileAtomically(env, path, contents, sync);
}

Status ReadSideFile(Env* env, const std::string& dir, const SideFile& entry, std::string* contents) {
  const std::string path = JoinPath(dir, entry.file);
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 32, contents));
  return CheckSideFile(path, entry, *contents);
}

Status CheckSideFile(const std::string& path, const SideFile& entry, std::string_view contents) {
  if (ChecksumHex(Xxh64(contents)) != entry.xxh64) {
    return Status::DataLoss(path + " does not match the checksum the manifest lists (the file changed after pack; " +
                            "run shardpack verify)");
  }
  return Status::OK();
}

}  // namespace shardpack
