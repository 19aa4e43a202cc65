// Fuzz target: a mixture's options as a user or a config file gives them (weights, samples, passes,
// epoch_size, per-source batches, batch size) over sources of any size. Whatever they are: no
// crash, no undefined behaviour (UBSan: a double cast to an integer it does not fit), and an
// accepted plan is one memory can hold (an epoch within kMaxEpochSamples) whose pattern gives every
// source exactly its quota.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shardpack/mixture.h"

namespace {

// The input read as a stream of fixed-size values; zeros once it runs out.
class Stream {
 public:
  Stream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T Next() {
    T value{};
    const size_t n = std::min(sizeof(T), size_ - std::min(size_, at_));
    if (n > 0) std::memcpy(&value, data_ + at_, n);
    at_ += sizeof(T);
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Stream in(data, size);
  shardpack::Mixture mixture;
  const size_t sources = 1 + in.Next<uint8_t>() % 4;
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < sources; ++i) {
    shardpack::MixtureSource s;
    s.location = "s" + std::to_string(i);
    s.weight = in.Next<double>();
    s.samples = in.Next<uint8_t>() & 1 ? in.Next<uint64_t>() : 0;
    s.passes = in.Next<uint8_t>() & 1 ? in.Next<double>() : 0;
    mixture.sources.push_back(s);
    sizes.push_back(1 + in.Next<uint16_t>() % 2000);  // sources of up to 2000 samples
  }
  mixture.epoch_size = in.Next<uint8_t>() & 1 ? in.Next<uint64_t>() : 0;
  mixture.per_source_batches = in.Next<uint8_t>() & 1;
  shardpack::SamplerOptions options;
  options.batch_size = 1 + in.Next<uint16_t>() % 512;
  options.seed = in.Next<uint64_t>();
  shardpack::MixturePlan plan;
  if (!shardpack::CheckMixture(mixture).ok()) return 0;
  if (!shardpack::MixturePlan::Create(mixture, sizes, {}, options, &plan).ok()) return 0;
  uint64_t sum = 0;
  for (const uint64_t q : plan.quotas()) sum += q;
  if (sum != plan.epoch_size() || plan.epoch_size() > shardpack::kMaxEpochSamples + 512 * 4) __builtin_trap();
  if (plan.epoch_size() > 200000) return 0;  // the pattern of a larger epoch costs too much per input
  const std::vector<uint32_t> pattern = plan.Pattern(0);
  std::vector<uint64_t> count(sources, 0);
  for (const uint32_t s : pattern) {
    if (s >= sources) __builtin_trap();
    ++count[s];
  }
  if (count != plan.quotas()) __builtin_trap();
  for (const uint64_t index : plan.Order(1)) {
    if (index >= plan.offsets().back() + sizes.back()) __builtin_trap();
  }
  return 0;
}
