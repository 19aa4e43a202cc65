#include "lib/side_file.h"

#include "shardpack/checksum.h"

namespace shardpack {

Status PublishSideFile(Env* env, const std::string& dir, const std::string& file, const std::string& contents,
                       bool sync, SideFile* entry) {
  entry->file = file;
  entry->xxh64 = ChecksumHex(Xxh64(contents));
  const std::string path = JoinPath(dir, file);
  if (sync) return WriteFileAtomically(env, path, contents);
  std::unique_ptr<WritableFile> f;
  SHARDPACK_RETURN_IF_ERROR(env->NewWritableFile(path + ".tmp", &f));
  SHARDPACK_RETURN_IF_ERROR(f->Append(contents));
  SHARDPACK_RETURN_IF_ERROR(f->Close());
  return env->RenameFile(path + ".tmp", path);
}

}  // namespace shardpack
