#include "ground/write_size_tuner.h"

#include <algorithm>

namespace shardpack {

WriteSizeTuner::WriteSizeTuner(std::vector<size_t> sizes) {
  for (size_t s : sizes) candidates_.push_back({s});
}

WriteSizeTuner& WriteSizeTuner::ForFileWrites() {
  static WriteSizeTuner tuner({size_t(8) << 10, size_t(32) << 10});
  return tuner;
}

size_t WriteSizeTuner::Next() {
  std::lock_guard<std::mutex> lock(mu_);
  ++choices_;
  Candidate* pick = nullptr;
  for (Candidate& c : candidates_) {
    if (c.measured < kTries && (pick == nullptr || c.measured < pick->measured)) pick = &c;
  }
  if (pick == nullptr && choices_ % kProbeEvery == 0) {
    pick = &*std::min_element(candidates_.begin(), candidates_.end(),
                              [](const Candidate& a, const Candidate& b) { return a.last_chosen < b.last_chosen; });
  }
  if (pick == nullptr) {
    pick = &*std::min_element(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
      return a.seconds_per_byte < b.seconds_per_byte;
    });
  }
  pick->last_chosen = choices_;
  return pick->size;
}

void WriteSizeTuner::Record(size_t size, uint64_t bytes, double seconds) {
  if (bytes < kMinMeasuredBytes) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (Candidate& c : candidates_) {
    if (c.size != size) continue;
    const double rate = seconds / double(bytes);
    // The first measurement as it is; later ones move the average a third of the way, so that one
    // piece slowed by another process neither decides nor is forgotten at once.
    c.seconds_per_byte = c.measured == 0 ? rate : c.seconds_per_byte + (rate - c.seconds_per_byte) / 3;
    ++c.measured;
  }
}

}  // namespace shardpack
