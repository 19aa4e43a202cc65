// How many worker threads an operation runs: the caller's count, at most one per core (oneTBB runs
// at most one thread per core, and warns on stderr when asked for more); 0 means every core.
#pragma once

#include <algorithm>
#include <thread>

namespace shardpack {

inline int WorkerThreads(int requested) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return requested > 0 ? std::min(requested, cores) : cores;
}

}  // namespace shardpack
