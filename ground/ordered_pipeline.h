// RunOrderedPipeline: read -> work -> write over reused slots, the shape of pack and convert,
// without anything of packing in it (ops/pack/pack_pipeline.cc fills it in).
//
//   1. read:  serial, in input order: the next input into the next free slot
//   2. work:  parallel: whatever each item needs on its own (load, probe, decode)
//   3. write: serial, in input order: consume the item; its slot is then free again
//
// Invariants: write sees the items in the order read produced them, whatever the thread count, so
// the output does not depend on it; at most slots.size() items are in flight, each in its own
// reused slot, so memory is bounded by the slots, not by the input's length.
#pragma once

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <exception>
#include <string>
#include <vector>

#include "ground/tsan_annotations.h"
#include "shardpack/status.h"

namespace shardpack {

// read(Item*, bool* done) -> Status fills the slot or sets *done at the end; work(Item*) reports
// through the item; write(Item*) -> Status. The first error of write, else of read, stops the
// pipeline (items in flight are dropped) and is returned. `name` prefixes a oneTBB failure.
template <typename Item, typename Read, typename Work, typename Write>
Status RunOrderedPipeline(const char* name, int threads, std::vector<Item>& slots, Read read, Work work, Write write) {
  std::atomic<bool> stop{false};
  Status read_error, write_error;
  size_t next = 0;
  // Tokens for the ThreadSanitizer annotations (ground/tsan_annotations.h): one per serial stage, and
  // each slot for the item in it. What happens here, before the pipeline, precedes both stages.
  const char read_stage = 0, write_stage = 0;
  HappensBefore(&read_stage);
  HappensBefore(&write_stage);
  const auto read_stage_fn = [&](tbb::flow_control& fc) -> Item* {
    HappensAfter(&read_stage);
    Item* item = &slots[next % slots.size()];
    HappensAfter(item);  // the item that last used this slot has left the write stage
    bool done = stop.load();
    if (!done) {
      read_error = read(item, &done);
      if (!read_error.ok()) done = true;
    }
    if (!done) {
      ++next;
      HappensBefore(item);
    }
    HappensBefore(&read_stage);
    if (done) {
      fc.stop();
      return nullptr;
    }
    return item;
  };
  const auto work_stage_fn = [&](Item* item) {
    HappensAfter(item);
    if (!stop.load()) work(item);
    HappensBefore(item);
    return item;
  };
  const auto write_stage_fn = [&](Item* item) {
    HappensAfter(item);
    HappensAfter(&write_stage);
    if (!stop.load()) {
      Status s = write(item);
      if (!s.ok()) {
        write_error = s;
        stop.store(true);
      }
    }
    HappensBefore(&write_stage);
    HappensBefore(item);  // the slot is free for the read stage again
  };
  try {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_pipeline(slots.size(),
                             tbb::make_filter<void, Item*>(tbb::filter_mode::serial_in_order, read_stage_fn) &
                                 tbb::make_filter<Item*, Item*>(tbb::filter_mode::parallel, work_stage_fn) &
                                 tbb::make_filter<Item*, void>(tbb::filter_mode::serial_in_order, write_stage_fn));
    });
  } catch (const std::exception& e) {
    return Status::IOError(std::string(name) + " failed: " + e.what());
  }
  HappensAfter(&read_stage);
  HappensAfter(&write_stage);
  return write_error.ok() ? read_error : write_error;
}

}  // namespace shardpack
