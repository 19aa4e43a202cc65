#include "ground/coefficient_budget.h"

#include <algorithm>

namespace shardpack {

CoefficientBudget& CoefficientBudget::Process() {
  static CoefficientBudget budget(kDefaultBytes);
  return budget;
}

CoefficientBudget::Lease CoefficientBudget::Acquire(uint64_t bytes) {
  if (bytes == 0) return Lease();
  std::unique_lock<std::mutex> lock(mu_);
  freed_.wait(lock, [&] { return held_ == 0 || held_ + bytes <= limit_; });
  held_ += bytes;
  peak_ = std::max(peak_, held_);
  return Lease(this, bytes);
}

void CoefficientBudget::Release(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ -= bytes;
  }
  freed_.notify_all();
}

void CoefficientBudget::set_limit(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
  }
  freed_.notify_all();
}

uint64_t CoefficientBudget::limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}

uint64_t CoefficientBudget::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

void CoefficientBudget::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = held_;
}

}  // namespace shardpack
