#include "ground/write_back.h"

#include <fcntl.h>

namespace shardpack {

void StartWriteBack(int fd, uint64_t end, uint64_t* started) {
  if (end <= *started) return;
  (void)::sync_file_range(fd, static_cast<off64_t>(*started), static_cast<off64_t>(end - *started),
                          SYNC_FILE_RANGE_WRITE);
  *started = end;
}

}  // namespace shardpack
