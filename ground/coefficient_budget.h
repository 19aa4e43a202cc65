// CoefficientBudget: a bound on the memory that progressive JPEG decodes hold at once, shared by
// every thread of the process.
//
// A baseline JPEG decodes a few rows at a time. A progressive one cannot: its scans each refine the
// whole image, so libjpeg keeps every DCT coefficient of the image until the last scan (2 bytes a
// coefficient: about 6 bytes a pixel at 4:4:4, 3 at 4:2:0), whatever scale or region is asked for.
// A 6000x6000 progressive photo held 233 MB for the one decode (measured for issue 38), and one at
// the default max_pixels (179 megapixels) over 1 GB; with a decode per core that multiplies by the cores. So a decode
// asks the budget for its coefficients before it starts and gives them back when it ends: the
// decodes in flight hold at most the budget together, the others wait their turn. One image larger
// than the whole budget still decodes, alone, so that no image is refused for it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace shardpack {

class CoefficientBudget {
 public:
  // The default bound: 1 GiB, about four 6000x6000 progressive photos at once.
  static constexpr uint64_t kDefaultBytes = uint64_t(1) << 30;

  explicit CoefficientBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  // The process's budget, shared by pack's pipeline and the loader's decoders.
  static CoefficientBudget& Process();

  // Holds `bytes` of the budget until destroyed (none for 0).
  class Lease {
   public:
    Lease() = default;
    Lease(CoefficientBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (budget_ != nullptr) budget_->Release(bytes_);
    }

   private:
    CoefficientBudget* budget_ = nullptr;
    uint64_t bytes_ = 0;
  };

  // Waits until `bytes` fit beside what others hold (or nothing is held), then holds them.
  Lease Acquire(uint64_t bytes);

  void set_limit(uint64_t bytes);
  uint64_t limit() const;
  // The most held at once since the last reset_peak(): what tests compare with the limit.
  uint64_t peak() const;
  void reset_peak();

 private:
  void Release(uint64_t bytes);

  mutable std::mutex mu_;
  std::condition_variable freed_;
  uint64_t limit_;
  uint64_t held_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace shardpack
