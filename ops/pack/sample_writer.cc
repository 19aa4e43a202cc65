// SampleWriter (shardpack/writer.h): the pack pipeline on a thread of its own, fed by a bounded
// queue (ops/pack/sample_queue_input.h) that Write() fills.
//
// The pipeline is pack's own (ops/pack/pack_pipeline.h), so a written dataset is a packed one: the
// same writers, checks, skips, journal and manifest. When the pipeline stops early (strict, disk
// full, Abort) the queue is failed with its status, which wakes a producer blocked in Write() and
// answers every later call.
#include <algorithm>
#include <thread>

#include "formats/registry/registry.h"
#include "ground/status_of_call.h"
#include "ground/worker_threads.h"
#include "ops/pack/append.h"
#include "ops/pack/output_dir.h"
#include "ops/pack/output_env.h"
#include "ops/pack/pack_pipeline.h"
#include "ops/pack/sample_queue_input.h"
#include "shardpack/writer.h"
#include "storage/location.h"

namespace shardpack {
namespace {

// What the dataset's messages call a writer's input (pack names its SRC there).
constexpr const char* kWriterSource = "the samples written";

// InvalidArgument for the pack options that have no meaning for a writer.
Status CheckWriterOptions(const WriterOptions& o) {
  const PackOptions& p = o.pack;
  const auto no = [](const std::string& what, const std::string& instead) {
    return Status::InvalidArgument("a writer takes no " + what + ": " + instead);
  };
  if (!p.list_file.empty()) return no("list file", "it writes the samples it is given");
  if (p.shuffle) return no("shuffle", "it writes samples in the order they are given (the loader shuffles)");
  if (p.path_keys) return no("path keys", "give each sample its key");
  if (p.resume) return no("resume", "a writer that stopped is run again from the start");
  if (p.partitions > 1) return no("pack partition", "give part and parts");
  if (o.parts == 0 || o.part >= o.parts) {
    return Status::InvalidArgument("writer part " + std::to_string(o.part) + " of " + std::to_string(o.parts) +
                                   ": the part must lie in 0.." + std::to_string(o.parts == 0 ? 0 : o.parts - 1));
  }
  if (o.parts > 1 && p.force) {
    return Status::InvalidArgument(
        "force cannot be used with parts: it would remove the other writers' files (each part replaces its own)");
  }
  if (o.append && o.parts > 1) {
    return Status::InvalidArgument("append with parts: append from one writer (parts=1)");
  }
  if (o.queue_samples == 0 || o.queue_bytes == 0) {
    return Status::InvalidArgument("the writer's queue must hold at least 1 sample and 1 byte");
  }
  return ValidatePackOptions(p);
}

class PipelineSampleWriter final : public SampleWriter {
 public:
  // append: the dataset the samples are added to (OpenAppendTarget), or null.
  PipelineSampleWriter(Env* env, std::unique_ptr<Env> output_env, const std::string& out, const WriterOptions& options,
                       SampleQueueInput::Options queue, std::unique_ptr<AppendTarget> append)
      : output_env_(std::move(output_env)), options_(options), input_(std::move(queue)), append_(std::move(append)) {
    thread_ = std::thread([this, env, out] {
      const uint32_t parts = options_.parts > 1 ? options_.parts : 0;
      const Status s = StatusOfCall("the writer's pipeline", [&] {
        if (append_ != nullptr) {
          return PackAppend(env, &input_, kWriterSource, options_.pack, *append_, /*discard_on_failure=*/true,
                            &result_);
        }
        return RunPackPipeline(env, &input_, kWriterSource, out, options_.pack, &result_, options_.part, parts);
      });
      // Early (the pipeline failed) or late (it drained the closed queue): nothing more is taken.
      input_.Fail(s.ok() ? Status::InvalidArgument("the writer is closed: write before close()") : s);
      status_ = s;
    });
  }

  ~PipelineSampleWriter() override {
    if (thread_.joinable()) Abort();
  }

  Status Write(WriterSample sample) override { return input_.Push(std::move(sample)); }

  Status Close(PackResult* result) override {
    if (!thread_.joinable()) return Status::InvalidArgument("the writer is closed already");
    input_.Close();
    thread_.join();
    if (status_.ok()) *result = result_;
    return status_;
  }

  void Abort() override {
    if (!thread_.joinable()) return;
    input_.Fail(Status::Aborted("the writer was aborted; no manifest was written"));
    thread_.join();
  }

  uint64_t samples_queued() const override { return input_.pushed(); }
  std::string RecycledBuffer(size_t size) override { return input_.TakeSpareBuffer(size); }

 private:
  std::unique_ptr<Env> output_env_;  // an s3:// OUT's; outlives the pipeline
  const WriterOptions options_;
  SampleQueueInput input_;
  const std::unique_ptr<AppendTarget> append_;
  PackResult result_;
  Status status_;  // the pipeline's, once the thread ended
  std::thread thread_;
};

}  // namespace

Status SampleWriter::Open(const std::string& out, const WriterOptions& options, std::unique_ptr<SampleWriter>* writer) {
  SHARDPACK_RETURN_IF_ERROR(CheckWriterOptions(options));
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.pack.format, &format));
  Location out_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out, &out_location));
  Env* env = nullptr;
  std::unique_ptr<Env> output_env;  // OUT in an object store
  SHARDPACK_RETURN_IF_ERROR(
      OutputEnvFor(out_location, format, options.pack.remote, options.pack.env, &output_env, &env));
  SampleQueueInput::Options queue;
  queue.classes = options.classes;
  std::unique_ptr<AppendTarget> append;
  if (options.append) {
    append = std::make_unique<AppendTarget>();
    SHARDPACK_RETURN_IF_ERROR(
        OpenAppendTarget(env, out, options.pack, /*for_writer=*/true, "an appending Writer", append.get()));
    const Manifest& dataset = append->dataset;
    if (!options.classes.empty() && dataset.classes.empty() && dataset.samples > 0) {
      return Status::InvalidArgument("the writer names classes but " + out +
                                     "'s samples have no class names (packed unlabelled, or with integer labels): "
                                     "append without classes, with labels as the dataset's");
    }
    queue.classes = AppendedClassList(dataset, options.classes);
  }
  // pack's message would offer --resume, which a writer cannot do.
  if (!options.append && options.parts <= 1 && !options.pack.force &&
      env->FileExists(JoinPath(out, kPackJournalFileName))) {
    return Status::InvalidArgument("output folder " + out +
                                   " holds an interrupted pack or writer; a writer does not resume: write it again "
                                   "with force (Python: force=True), which replaces what is there");
  }
  // A part written again after merge would rewrite its shards under the merged manifest, which
  // would then describe files that are no longer there as it says (pack --partition refuses a
  // finished part for the same reason).
  if (options.parts > 1 && env->FileExists(JoinPath(out, kManifestFileName))) {
    return Status::InvalidArgument(
        "output folder " + out + " holds a merged dataset (" + kManifestFileName + "): writer part " +
        std::to_string(options.part) + " of " + std::to_string(options.parts) +
        " is in it already, and writing it again would change its shards under that manifest. Write the parts "
        "into a new folder, or remove " +
        JoinPath(out, kManifestFileName) + " first (then merge again once every part is closed)");
  }
  // Parts share OUT: each replaces its own files (the pipeline), never the others'. An append
  // writes into the dataset's staging folder only.
  if (!options.append) {
    SHARDPACK_RETURN_IF_ERROR(PrepareOutputDir(env, "", out, options.pack.force, /*resume=*/options.parts > 1));
  }
  queue.max_samples = options.queue_samples;
  queue.max_bytes = options.queue_bytes;
  queue.jpeg_quality = options.pack.jpeg_quality;
  using Encoding = SampleQueueInput::Options::PixelEncoding;
  queue.pixel_encoding = options.pack.format == DatasetFormat::kRaw ? Encoding::kBmp
                         : options.pixels_as_jpeg                   ? Encoding::kJpeg
                                                                    : Encoding::kPng;
  WriterOptions o = options;
  // The producer is a thread too: by default the pipeline takes the other cores (on 2 cores,
  // 1 thread wrote 20% more samples a second than 2, which the producer had to share a core with).
  if (o.pack.threads <= 0) o.pack.threads = std::max(1, WorkerThreads(0) - 1);
  writer->reset(new PipelineSampleWriter(env, std::move(output_env), out, o, std::move(queue), std::move(append)));
  return Status::OK();
}

}  // namespace shardpack
