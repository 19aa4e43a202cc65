// SampleQueueInput: the pack pipeline's input for SampleWriter (shardpack/writer.h): the samples a
// program writes, through a bounded queue.
//
// Push() (the producer, any thread) appends to the queue and blocks while it is full, until it is
// half empty; Next() (the pipeline's first stage) takes from it, and when it finds it empty waits
// for a batch (BatchReady), or for Close(). So neither side wakes the other for every sample. The queue is bounded by a
// count and by bytes, so a producer faster than the disk waits instead of filling memory: what is
// in flight is at most the queue plus the pipeline's slots. Checks that concern the call itself (a
// bad key or field name, a class not in the list) fail Push at once; checks of the data (does the
// image decode) are the pipeline's, which skips and reports as pack does.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "formats/common/pack_input.h"
#include "shardpack/writer.h"

namespace shardpack {

class SampleQueueInput final : public PackInput {
 public:
  struct Options {
    std::vector<std::string> classes;
    size_t max_samples = 16;
    uint64_t max_bytes = 256ull << 20;
    // How Load() encodes pixels: BMP for raw (which decodes them again, losslessly, to store them
    // as they are), else PNG or JPEG at jpeg_quality.
    enum class PixelEncoding { kPng, kJpeg, kBmp } pixel_encoding = PixelEncoding::kPng;
    int jpeg_quality = 90;
  };
  explicit SampleQueueInput(Options options);

  // Queues `sample`; blocks while the queue is full. InvalidArgument for a sample that is wrong as
  // given; after Close() FailedPrecondition; after Fail() the status given there.
  Status Push(WriterSample sample);
  // No more samples: Next() says done once the queue is drained.
  void Close();
  // The pipeline stopped, or the writer is aborted: Push() and Next() return `why` from now on,
  // and the queued samples are dropped.
  void Fail(const Status& why);
  uint64_t pushed() const;
  // An empty string with room for `size` bytes: an earlier sample's image buffer when one is large
  // enough, else a new one with a quarter more room (so that buffers come to fit most images).
  std::string TakeSpareBuffer(size_t size);

  const std::vector<std::string>& class_names() const override { return options_.classes; }
  uint64_t expected() const override { return 0; }
  Status Next(PackItem* item, bool* done) override;
  // Encodes the pixels Next() left in item->pixels (pipeline threads, in parallel).
  Status Load(PackItem* item) const override;

 private:
  // InvalidArgument when the sample cannot be written as given; *label: its label.
  Status Check(const WriterSample& sample, int32_t* label) const;
  static uint64_t BytesOf(const WriterSample& sample);
  // At most half the queue's bounds in use: where a producer that found the queue full goes on.
  bool BelowLowWater() const;
  // Enough queued for the waiting pipeline to take: a batch of samples (a quarter of the queue, at
  // most 64), half the byte bound, or a producer waiting for room.
  bool BatchReady() const;

  const Options options_;
  std::map<std::string, int32_t> class_index_;
  mutable std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  struct Queued {
    WriterSample sample;
    uint64_t bytes = 0;  // BytesOf(sample), counted once
  };
  std::deque<Queued> queue_;
  uint64_t queued_bytes_ = 0;
  uint64_t pushed_ = 0;  // samples accepted so far: the next one's number
  uint64_t taken_ = 0;   // samples Next() has given the pipeline
  bool closed_ = false;
  int producers_waiting_ = 0;                // Push() calls waiting for room
  bool consumer_waiting_ = false;            // Next() waits for a batch
  Status failed_;                            // set by Fail()
  int keyed_ = -1;                           // -1: no sample yet; 1: samples carry keys; 0: they take index keys
  std::unordered_set<uint64_t> key_hashes_;  // XXH64 of the keys given, to refuse a repeat
  // Image buffers the pipeline's slots gave up, for producers to fill again (SampleWriter::
  // RecycledBuffer): at most max_samples of them, holding at most half of max_bytes.
  std::vector<std::string> spare_;
  uint64_t spare_bytes_ = 0;  // their capacity
};

}  // namespace shardpack
