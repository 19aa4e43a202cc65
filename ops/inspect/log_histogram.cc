// LogHistogram (shardpack/stat.h): bins by floor(log2(v) * steps), grown at either end as values
// arrive, so that nothing needs the range up front and merging two is adding bin by bin.
#include <algorithm>
#include <cmath>

#include "shardpack/stat.h"

namespace shardpack {
namespace {

int BinOf(double value, int steps) { return static_cast<int>(std::floor(std::log2(value) * steps)); }

// Makes `h` cover bins [low, high] (inclusive), keeping its counts where they are.
void Cover(LogHistogram* h, int low, int high) {
  if (h->counts.empty()) {
    h->first = low;
    h->counts.assign(size_t(high - low + 1), 0);
    return;
  }
  if (low < h->first) {
    h->counts.insert(h->counts.begin(), size_t(h->first - low), 0);
    h->first = low;
  }
  const int last = h->first + static_cast<int>(h->counts.size()) - 1;
  if (high > last) h->counts.resize(h->counts.size() + size_t(high - last), 0);
}

}  // namespace

double LogHistogram::lower_edge(size_t k) const {
  return std::exp2(double(first + static_cast<int>(k)) / steps_per_octave);
}

void LogHistogram::Add(double value) {
  if (!(value > 0)) {  // 0 (unknown), and NaN, which no size is
    ++zero;
    return;
  }
  const int bin = BinOf(value, steps_per_octave);
  Cover(this, bin, bin);
  ++counts[size_t(bin - first)];
}

void LogHistogram::Merge(const LogHistogram& other) {
  zero += other.zero;
  if (other.counts.empty()) return;
  Cover(this, other.first, other.first + static_cast<int>(other.counts.size()) - 1);
  for (size_t k = 0; k < other.counts.size(); ++k) counts[size_t(other.first - first) + k] += other.counts[k];
}

}  // namespace shardpack
