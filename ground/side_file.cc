#include "ground/side_file.h"

#include "shardpack/checksum.h"

namespace shardpack {

Status PublishSideFile(Env* env, const std::string& dir, const std::string& file, const std::string& contents,
                       bool sync, SideFile* entry) {
  entry->file = file;
  entry->xxh64 = ChecksumHex(Xxh64(contents));
  const std::string path = JoinPath(dir, file);
  return WriteFileAtomically(env, path, contents, sync);
}

}  // namespace shardpack
