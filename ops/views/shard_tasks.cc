#include "ops/views/shard_tasks.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <mutex>
#include <string>
#include <vector>

#include "ground/status_of_call.h"
#include "ground/worker_threads.h"

namespace shardpack {

Status ForEachShardTask(size_t first, size_t last, int threads, const char* what,
                        const std::function<void(uint64_t done, uint64_t total)>& on_shard,
                        const std::function<Status(size_t)>& task) {
  std::vector<Status> statuses(last - first);
  std::mutex progress_mu;
  uint64_t done = 0;
  try {
    tbb::task_arena arena(WorkerThreads(threads));
    arena.execute([&] {
      tbb::parallel_for(first, last, [&](size_t i) {
        statuses[i - first] = StatusOfCall(what, [&] { return task(i); });
        if (on_shard) {
          std::lock_guard<std::mutex> lock(progress_mu);
          on_shard(++done, last - first);
        }
      });
    });
  } catch (const std::exception& e) {
    return Status::IOError(std::string(what) + " failed: " + e.what());
  }
  for (const Status& s : statuses) SHARDPACK_RETURN_IF_ERROR(s);
  return Status::OK();
}

}  // namespace shardpack
