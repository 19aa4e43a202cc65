#include "ground/dataset_lock.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "ground/printable.h"

namespace shardpack {
namespace {

// "an append of /data/more (process 1234 on node7, since 2026-12-06 08:41:22 UTC)".
std::string HolderLine(const std::string& what) {
  char host[256] = "";
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  char since[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (::gmtime_r(&now, &utc) != nullptr) std::strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return what + " (process " + std::to_string(::getpid()) + (host[0] ? std::string(" on ") + host : "") + ", since " +
         since + ")";
}

}  // namespace

DatasetFolderLock::~DatasetFolderLock() {
  (void)env_->RemoveFile(holder_path_);
  lock_.reset();
}

Status LockDatasetFolder(Env* env, const std::string& dir, const std::string& what,
                         std::unique_ptr<DatasetFolderLock>* lock) {
  lock->reset();
  const std::string holder_path = JoinPath(dir, kDatasetLockHolderFile);
  std::unique_ptr<FileLock> held;
  std::string holder;
  // The holder writes its note just after it takes the lock, and removes it just before it lets
  // go: a run that finds the lock taken and no note yet (or any more) looks again, briefly, and
  // takes the lock if it was let go meanwhile.
  for (int attempt = 0; attempt < 50; ++attempt) {
    bool acquired = false;
    const Status s = env->TryLockFolder(dir, &held, &acquired);
    if (s.code() == Status::Code::kUnsupported) return Status::OK();
    SHARDPACK_RETURN_IF_ERROR(s);
    if (acquired) break;
    // The note is another run's words: read bounded, shown printable, and only a hint.
    if (env->ReadFile(holder_path, 4096, &holder).ok() && !holder.empty()) break;
    holder.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (held == nullptr) {
    if (holder.empty()) holder = "another shardpack run";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r')) holder.pop_back();
    return Status::Aborted(dir + " is being written by " + Printable(holder) +
                           ": wait for it to finish, then run this again (one run at a time may add to a dataset)");
  }
  // The lock, not this note, is what keeps others out: a note that cannot be written costs only
  // the second run's message its detail.
  (void)WriteFileAtomically(env, holder_path, HolderLine(what) + "\n", /*sync=*/false);
  *lock = std::make_unique<DatasetFolderLock>(env, holder_path, std::move(held));
  return Status::OK();
}

}  // namespace shardpack
