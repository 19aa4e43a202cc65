// WriteSizeTuner: how many bytes each write(2) hands the kernel, chosen by measuring.
//
// The kernel caches a write in folios up to the write's size, and on a virtual machine whose
// balloon driver hands free memory back to the host, where those folios come from decides the
// write's cost: on one host 8 KiB writes were twice as fast as 32 KiB ones, on another 32 KiB
// writes were 1.2-1.5x as fast as 8 KiB ones (docs/performance.md, "Large writes"). No size is
// right everywhere, so the writer tries each candidate, then uses the one that wrote fastest, and
// keeps trying the others now and then, because the host's memory changes under a long run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace shardpack {

class WriteSizeTuner {
 public:
  // `sizes`: the candidates, the first the default until measurements say otherwise.
  explicit WriteSizeTuner(std::vector<size_t> sizes);

  // The process's tuner for file writes (8 KiB and 32 KiB), shared by every file and thread:
  // what one file measured serves the next.
  static WriteSizeTuner& ForFileWrites();

  // The write size for the next piece: each candidate until it has kTries measurements, then the
  // fastest, except that every kProbeEvery-th piece goes to the candidate chosen least recently.
  size_t Next();
  // `bytes` written in `seconds` with write size `size` (one of the candidates). Pieces under
  // kMinMeasuredBytes are not counted: a few system calls say nothing about the rate.
  void Record(size_t size, uint64_t bytes, double seconds);

  static constexpr int kTries = 2;
  static constexpr int kProbeEvery = 16;
  static constexpr uint64_t kMinMeasuredBytes = 1 << 20;

 private:
  struct Candidate {
    size_t size = 0;
    int measured = 0;             // pieces recorded
    double seconds_per_byte = 0;  // moving average of the recorded pieces
    uint64_t last_chosen = 0;     // the choice number that last picked it
  };

  std::mutex mu_;
  std::vector<Candidate> candidates_;
  uint64_t choices_ = 0;
};

}  // namespace shardpack
