// PackTally: what a pack counts as it goes (files done, samples, bytes, skips), the progress
// reports made from those counts, and the skip rule (--strict stops at the first). Used from the
// pipeline's serial write stage only, so it needs no locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "formats/common/pack_input.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"

namespace shardpack {

class PackTally {
 public:
  PackTally(const PackOptions& options, const PackInput& input)
      : options_(options), input_(input), initial_skips_(input.initial_skips().size()), start_(Clock::now()) {}

  // Continues the counts of an interrupted run: `journal` holds its samples and skips, and it had
  // accounted for `files_done` inputs.
  void ContinueFrom(const Manifest& journal, uint64_t files_done);

  // Lists a skipped input and reports it (options.on_skip). Aborted, naming it, under --strict.
  Status Skip(const SkippedFile& file);
  // An input that became a sample of `bytes` bytes.
  void CountSample(uint64_t bytes);
  // An input taken by the write stage, whatever became of it.
  void CountFile() { ++files_done_; }

  // Calls options.on_progress, at most every 100 ms unless `force`.
  void Report(bool force);

  uint64_t samples() const { return samples_; }
  uint64_t bytes_read() const { return bytes_read_; }
  const std::vector<SkippedFile>& skipped() const { return skipped_; }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  const PackOptions& options_;
  const PackInput& input_;
  const uint64_t initial_skips_;  // counted once: an input builds its list anew on each call
  const Clock::time_point start_;
  Clock::time_point last_report_;
  std::vector<SkippedFile> skipped_;
  uint64_t samples_ = 0, files_done_ = 0, bytes_read_ = 0;
};

}  // namespace shardpack
