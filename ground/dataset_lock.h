// One writer at a time in a dataset folder. Two appends started together both read the same
// manifest, both numbered their shards after its last, and the second's manifest replaced the
// first's: one reported success while the dataset no longer verified. Every run that adds to a
// dataset folder (append, an appending Writer, split and subset into it, merge) holds this lock for
// its whole length; a second is refused at once, told which run holds it.
#pragma once

#include <memory>
#include <string>

#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

// What the holder writes in the folder, for a second run's message: what it does, its process and
// host, since when. Removed when the lock is released; a run that was killed leaves it, and the
// next holder writes over it. Not a shard (verify does not report it).
inline constexpr char kDatasetLockHolderFile[] = ".shardpack-write.holder";

// The lock of a dataset folder while held: flock(2) of the folder itself, so no lock file is left
// behind and a process that dies (even by SIGKILL) releases it.
class DatasetFolderLock {
 public:
  DatasetFolderLock(Env* env, std::string holder_path, std::unique_ptr<FileLock> lock)
      : env_(env), holder_path_(std::move(holder_path)), lock_(std::move(lock)) {}
  // Removes the holder note, then releases the lock (in that order: once released, the next
  // holder's note must not be removed).
  ~DatasetFolderLock();
  DatasetFolderLock(const DatasetFolderLock&) = delete;
  DatasetFolderLock& operator=(const DatasetFolderLock&) = delete;

 private:
  Env* env_;
  std::string holder_path_;
  std::unique_ptr<FileLock> lock_;
};

// Takes the lock of `dir` (a folder that exists), held until *lock is destroyed. `what` says what
// this run does ("an append of /data/more"), for the message a second run gets: Aborted (nothing
// was done) naming the holder and the way out. An Env without folder locks (an object store) takes none:
// *lock stays empty and OK is returned.
Status LockDatasetFolder(Env* env, const std::string& dir, const std::string& what,
                         std::unique_ptr<DatasetFolderLock>* lock);

}  // namespace shardpack
