// SampleWriter: writes a dataset from code, one sample at a time (docs/writer.md).
//
// Many datasets never exist as a folder of files: they come out of a program. A SampleWriter takes
// the samples such a program makes and writes the dataset `pack` would write, through the same
// pipeline: the same shards, indexes, sample tables, checksums and manifest, the same checks and
// skips. Writing the files of a tree in pack's order, with their relative paths and pack's class
// list, gives shards byte-identical to pack's.
//
//   std::unique_ptr<SampleWriter> writer;
//   WriterOptions options;
//   options.pack.format = DatasetFormat::kWebDataset;
//   options.classes = {"cat", "dog"};
//   Status s = SampleWriter::Open("/data/pets-wds", options, &writer);
//   WriterSample sample;
//   sample.image = jpeg_bytes;
//   sample.class_name = "dog";
//   s = writer->Write(std::move(sample));   // blocks while the queue is full
//   PackResult result;
//   s = writer->Close(&result);             // publishes manifest.json
//
// Write() only queues the sample; checking, encoding pixels, hashing and writing run on the
// pipeline's threads. The queue is bounded, so memory stays bounded however fast the producer is.
// A writer does not resume: a writer that was killed or aborted leaves no manifest (its complete
// shards stay, as a killed pack's do), and a new run writes everything again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "shardpack/image.h"
#include "shardpack/pack.h"
#include "shardpack/status.h"

namespace shardpack {

struct WriterOptions {
  // What pack takes: format, prefix, shard_size_bytes, samples_per_shard, threads, strict,
  // decode_check, max_sample_bytes, max_pixels, raw's resize / crop / keep_size / compress,
  // max_side and jpeg_quality, sync, force (replace a dataset in OUT), env, remote (an s3:// OUT),
  // on_progress, on_skip, cancel. Not: list_file, layout, shuffle, path_keys, resume, partition
  // (a writer writes in the order it is given, and parts are `part` below). threads 0: every core
  // but one, which the producer is left.
  PackOptions pack;
  // The class list, as pack derives it from class folders: a sample's class_name is looked up in
  // it, and its label must lie within it. Empty: labels are free (any label >= -1), no class names.
  std::vector<std::string> classes;
  // Pixels given to Write (WriterSample::pixels) are stored by wds and lmdb as PNG (lossless), or
  // as JPEG at pack.jpeg_quality (default 90, 4:2:0) when this is set; raw stores them as they are
  // (its resize and crop apply, as to any image).
  bool pixels_as_jpeg = false;
  // The queue between Write() and the pipeline: Write() blocks while it holds this many samples,
  // or this many bytes (a larger sample still goes in alone), until it is half empty. A deep queue
  // lets the producer and the pipeline run in long stretches instead of waking each other for
  // every sample; the byte bound is what bounds memory.
  size_t queue_samples = 256;
  uint64_t queue_bytes = 64ull << 20;
  // One of several writers that write one dataset (each in its own process: a pool, a Slurm array, a
  // Ray or Spark job): this writer writes part `part` of `parts` into OUT, its shards named
  // "<prefix>-wPPPPP-NNNNNN" and its manifest "writer-PPPPP-of-NNNNN.json", names that pack
  // --partition never uses. Its index keys are "wPPPPP-NNNNNNNNN" (unique across parts; keys the
  // caller gives must be unique across parts too). `shardpack merge OUT` joins the parts once all
  // are closed. 1: the whole dataset, with manifest.json.
  uint32_t part = 0;
  uint32_t parts = 1;
  // Add the samples to the dataset in OUT as new shards after its own, as `shardpack append` does
  // (docs/views.md): pack's options must be those it was packed with, index keys continue after its
  // samples, `classes` extends its class list (its classes keep their labels; an int label indexes
  // the list as extended), and its manifest is written last. Not with parts or force. An append
  // interrupted in OUT is refused (a writer does not resume).
  bool append = false;
};

// One sample. Give exactly one of `image` (encoded bytes: JPEG, PNG, WebP or BMP, stored untouched
// unless max_side bounds them) and `pixels` (8-bit RGB).
struct WriterSample {
  // empty: the running index ("000000042"), as pack's. To refuse a repeated key the writer keeps a
  // 64-bit hash of every key given, about 40 bytes a keyed sample (4 GB at 100M samples): write
  // larger datasets with index keys, or in parts (merge checks keys across parts).
  std::string key;
  int32_t label = -1;                         // -1: unlabelled, unless class_name gives it
  std::string class_name;                     // one of WriterOptions::classes; sets label
  std::string relpath;                        // recorded as the sample's "path" (pack: SRC-relative)
  std::string image;                          // encoded bytes
  DecodedImage pixels;                        // or pixels
  std::map<std::string, std::string> fields;  // "txt", "json", "seg.png", ...: name -> bytes
};

class SampleWriter {
 public:
  // Prepares OUT as pack does (empty, or force; an s3:// OUT uploads) and starts the pipeline.
  // InvalidArgument naming the option and the fix.
  static Status Open(const std::string& out, const WriterOptions& options, std::unique_ptr<SampleWriter>* writer);

  // Without Close(), Abort().
  virtual ~SampleWriter() = default;

  // Queues one sample; blocks while the queue is full. Thread-safe: samples are written in the order
  // the calls enter, and index keys follow that order. InvalidArgument at once for a sample that is
  // wrong as given (a key with '.' or '/', a repeated key, a class not in the list, no image or two,
  // a bad field name). A sample whose data is bad (an image that does not decode, a caption that is
  // not UTF-8, a mask of another size) is skipped and reported (on_skip, the manifest), or with
  // pack.strict the error, naming the sample, is returned by a later Write() or by Close(). So is
  // any error that stopped the pipeline (disk full, an upload refused).
  virtual Status Write(WriterSample sample) = 0;

  // Waits for every queued sample, finishes the last shard and publishes the manifest (with parts:
  // the part manifest). On error no manifest is written. Once only.
  virtual Status Close(PackResult* result) = 0;

  // Stops: the queued samples are dropped, the shard in progress is removed, no manifest is written
  // (complete shards stay, as a killed pack's). For an exception in the producer.
  virtual void Abort() = 0;

  // Samples queued so far (Write() calls that succeeded).
  virtual uint64_t samples_queued() const = 0;

  // An empty string with room for `size` bytes, preferably the buffer of an earlier sample's image:
  // fill it and give it back as WriterSample::image. Memory that circulates spares the page faults
  // of fresh allocations, which cost more than copying the bytes. Thread-safe; optional.
  virtual std::string RecycledBuffer(size_t size) = 0;
};

}  // namespace shardpack
