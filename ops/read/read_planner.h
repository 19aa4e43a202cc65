// ReadPlanner: which shards a remote dataset's reader will need, and when, told a window of
// batches at a time, so that planning costs the window's samples, not the epoch's (a billion).
//
// Positions count the reads of the epoch from its first batch on: each sample a batch takes, and
// under the streaming shuffle each sample kept from a shard the stream is leaving (a "drain",
// read just before the batch that first finds the stream past the shard, so that the shard can go:
// ops/read/buffered_sample_reader.h). A shard's use is the first and last position that reads it.
//
// Windows: batches [first_batch + kW, first_batch + (k+1)W). The plan handed to the reader covers
// the window the producer is in and the next one, so that downloads run at least a window ahead;
// it is made again (Advance) when the producer enters the next window, with the positions already
// given kept, so that the reader's view of what is done never moves back.
//
// Drains need to know which of a shard's samples this worker takes after the stream has left it:
// samples wait in the buffer a random while (each draw keeps a given sample with probability
// 1 - 1/K, K the buffer), so a second walk runs ahead of the plan by kHorizonBuffers buffers of
// positions and collects them. A sample taken later still (probability e^-32 per sample: about
// once in 10^14) was not kept: its shard is planned again where it is read, and read again then.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "formats/common/shard_locator.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/sampler.h"

namespace shardpack {

class ReadPlanner {
 public:
  static constexpr uint64_t kHorizonBuffers = 32;

  struct Drain {
    size_t shard = 0;
    uint64_t position = 0;  // of its first read
    std::vector<uint64_t> indices;
  };

  // sampler: the loader's, copied (a copy runs its own stream). shards: the dataset's (the reader's
  // manifest), in its order. keep_waiting: the streaming shuffle with a BufferedSampleReader (drains).
  // window_batches: batches per window (at least 1). horizon_buffers: how far the walk ahead runs,
  // in shuffle buffers (tests make it small to miss samples).
  ReadPlanner(const EpochSampler& sampler, const ShardTable& shards, const SamplerOptions& options, bool keep_waiting,
              uint64_t epoch, uint64_t first_batch, uint64_t window_batches,
              uint64_t horizon_buffers = kHorizonBuffers);

  // Batches per window when not given: enough that a window spans at least `shards_ahead` shards
  // of an epoch streamed shard by shard, and at least 8 batches.
  static uint64_t Window(uint64_t dataset_size, size_t shard_count, const SamplerOptions& options,
                         uint64_t shards_ahead);

  // The producer is about to make batch b (b >= first_batch, increasing from call to call). True
  // when the reader must be given a new plan: *uses (by first use) and *position (where the reads
  // are: every use before it is done).
  bool Advance(uint64_t b, std::vector<ShardUse>* uses, uint64_t* position);
  // Of batch b, once Advance(b) was called: the drains to read before it (moved out: the caller's
  // to read), and the position of its first sample.
  std::vector<Drain> TakeDrains(uint64_t b);
  uint64_t BatchPosition(uint64_t b) const;

 private:
  // The shard that holds sample `index`; the shard count for an index past the dataset.
  size_t ShardOf(uint64_t index) const;
  // Plans window k: its drains and batch positions, and its uses into windows_.
  void PlanWindow(uint64_t k);
  // Moves the walk ahead (keep_) over batches up to the one that starts at or past `position`,
  // collecting the samples taken after their shard was left.
  void WalkAhead(uint64_t position);

  EpochSampler plan_sampler_, keep_sampler_;  // two streams, each front to back
  const uint64_t epoch_, first_batch_, end_batch_, window_;
  bool keep_waiting_;
  const uint64_t horizon_;  // positions of the order the walk ahead runs past a window
  const ShardLocator locator_;
  const size_t shard_count_;
  uint64_t samples_ = 0;  // in the shards

  // Drains (keep_waiting_ only).
  std::vector<uint64_t> drain_at_;      // per shard: the batch that first finds the stream past it
  std::vector<uint64_t> stream_order_;  // shards in the order the stream reads them
  size_t next_drain_ = 0;               // in stream_order_: the first shard whose drain is not placed
  std::vector<bool> drained_;           // per shard: its drain is placed
  std::unordered_map<size_t, std::vector<uint64_t>> waiting_;  // shard -> samples to keep
  std::unordered_set<uint64_t> missed_;                        // samples taken past the horizon: read from their shard
  uint64_t keep_next_ = 0;                                     // the walk ahead's next batch

  // Planned windows: the one the producer is in and the next.
  struct PlannedWindow {
    uint64_t k = 0;
    std::vector<ShardUse> uses;  // by shard
  };
  std::deque<PlannedWindow> windows_;
  uint64_t next_window_ = 0;  // the next window to plan
  uint64_t position_ = 0;     // the position at the end of the planned windows
  uint64_t base_batch_ = 0;   // the batch drains_[0] and positions_[0] belong to
  std::deque<std::vector<Drain>> drains_;
  std::deque<uint64_t> positions_;
  std::vector<uint64_t> indices_;
};

}  // namespace shardpack
