#include "formats/common/shard_index_cache.h"

#include <cstdlib>
#include <string>

#include "ground/units.h"

namespace shardpack {

Status IndexMemoryBound(uint64_t* bytes) {
  *bytes = kDefaultIndexMemory;
  const char* text = std::getenv("SHARDPACK_INDEX_MEMORY");
  if (text == nullptr || *text == '\0') return Status::OK();
  if (!ParseByteSize(text, bytes).ok()) {
    return Status::InvalidArgument(std::string("SHARDPACK_INDEX_MEMORY=") + text +
                                   " is not a size: give bytes or a size such as 512MB or 2GiB");
  }
  return Status::OK();
}

}  // namespace shardpack
