// A one-line progress display for a terminal: files, MB/s, ETA (pack), shards (stat, verify). Prints nothing when
// stderr is not a terminal or when disabled.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "shardpack/pack.h"

namespace shardpack {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool enabled);
  void Update(const PackProgress& p);
  // stat and verify: "WHAT: DONE/TOTAL shards  ETA m:ss", from 2 s after the start (a short run
  // prints nothing) and at most ten times a second. Thread-safe.
  void UpdateShards(const char* what, uint64_t done, uint64_t total);
  // Clears the line, so that later output starts on a clean line.
  void Finish();

 private:
  bool enabled_;
  bool printed_ = false;
  std::mutex mu_;  // UpdateShards may come from several threads
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_;
};

}  // namespace shardpack
