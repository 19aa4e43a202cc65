// Fuzz target: the numbers a resume state carries into the loader (shardpack.Loader's
// load_state_dict, a checkpoint another run or a user wrote): epoch, first batch, the epoch's
// samples done, and the sampler's options (batch size, ranks, workers, drop_last, shuffle, buffer)
// over a dataset of any size and shards. Whatever they are: no crash or undefined behaviour; an
// accepted state gives batches of dataset indices, none twice in the epoch on this rank, all taken
// from the order's rest (SetEpochStart), and never more batches than the plan says.
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "shardpack/sampler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t v[12] = {};
  std::memcpy(v, data, std::min(size, sizeof(v)));
  const uint64_t samples = 1 + v[0] % 5000;
  shardpack::SamplerOptions o;
  o.batch_size = v[1] % 700;  // 0 included: refused
  o.shuffle = v[2] & 1;
  o.shuffle_buffer = (v[2] >> 1) & 1 ? v[3] % 3000 : 0;
  o.seed = v[4];
  o.drop_last = (v[2] >> 2) & 1;
  o.world_size = uint32_t(v[5] % 20);  // 0 included: refused
  o.rank = uint32_t(v[6] % 24);        // beyond the world included: refused
  o.num_workers = uint32_t(1 + v[7] % 4);
  o.worker = uint32_t(v[7] >> 8) % 5;
  std::vector<uint64_t> shards;
  for (uint64_t left = samples, cut = 1 + v[8] % 700; left > 0; left -= std::min(left, cut)) {
    shards.push_back(std::min(left, cut));
  }
  shardpack::EpochSampler sampler;
  if (!shardpack::EpochSampler::Create(samples, o, &sampler, shards).ok()) return 0;
  const uint64_t samples_done = v[9] % (samples + 10);  // beyond the dataset included: refused
  if (!sampler.SetEpochStart(samples_done).ok()) return 0;
  const uint64_t epoch = v[10] % 1000;
  const uint64_t first = v[11] % (sampler.worker_batches() + 3);
  std::set<uint64_t> seen;
  std::vector<uint64_t> batch;
  for (uint64_t b = first; b < sampler.worker_batches(); ++b) {
    sampler.Batch(epoch, b, &batch);
    if (batch.empty() || batch.size() > o.batch_size) __builtin_trap();
    uint64_t begin = 0, end = 0;
    sampler.BatchRange(b, &begin, &end);
    if (begin < samples_done || end > samples || end - begin != batch.size()) __builtin_trap();
    for (const uint64_t index : batch) {
      if (index >= samples || !seen.insert(index).second) __builtin_trap();
    }
  }
  (void)sampler.SamplesConsumed(v[11] % (sampler.rank_batches() + 2));
  return 0;
}
