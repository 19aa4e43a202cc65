#include "ops/pack/pack_tally.h"

namespace shardpack {

void PackTally::ContinueFrom(const Manifest& journal, uint64_t files_done) {
  samples_ = journal.samples;
  skipped_ = journal.skipped;
  files_done_ = files_done;
}

Status PackTally::Skip(const SkippedFile& file) {
  skipped_.push_back(file);
  if (options_.on_skip) options_.on_skip(file);
  if (options_.strict) {
    return Status::Aborted(file.path + ": " + file.reason + " (--strict stops at the first bad input)");
  }
  return Status::OK();
}

void PackTally::CountSample(uint64_t bytes) {
  bytes_read_ += bytes;
  ++samples_;
}

void PackTally::Report(bool force) {
  if (!options_.on_progress) return;
  const Clock::time_point now = Clock::now();
  if (!force && now - last_report_ < std::chrono::milliseconds(100)) return;
  last_report_ = now;
  // The input's initial skips (unreadable folders, files that are no images) count as done.
  const uint64_t initial = initial_skips_;
  PackProgress p;
  p.files_done = files_done_ + initial;
  p.files_total = input_.expected() + initial;
  p.bytes_read = bytes_read_;
  p.samples_packed = samples_;
  p.files_skipped = skipped_.size();
  p.elapsed_seconds = seconds();
  options_.on_progress(p);
}

}  // namespace shardpack
