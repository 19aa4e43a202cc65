// The pack pipeline, shared by pack and convert: a three-stage oneTBB pipeline over a PackInput:
//   1. serial, in order:  the input's next sample, into a reused buffer slot
//   2. parallel:          load its bytes (files), probe the image, decode + transform it (raw)
//   3. serial, in order:  report skips, assign the key, append to the format's DatasetWriter
// Stage 3 sees samples in input order whatever the thread count, so output is byte-identical across
// thread counts. At most `tokens` samples are in flight, each in its own reused buffer, so memory is
// bounded by tokens x max_sample_bytes, not by the dataset's size.
#include "ops/pack_pipeline.h"

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "formats/registry/registry.h"
#include "ground/manifest_json.h"
#include "ground/sample_keys.h"
#include "ground/tsan_annotations.h"
#include "ops/pack_journal.h"
#include "ops/worker_threads.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

Status ValidatePackOptions(const PackOptions& o) {
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(o.format, &format));
  SHARDPACK_RETURN_IF_ERROR(format->CheckPackOptions(o));
  if (o.prefix.empty() || o.prefix.find_first_of("/.") != std::string::npos) {
    return Status::InvalidArgument("shard prefix '" + o.prefix + "' must be non-empty and contain no '/' or '.'");
  }
  if (o.shard_size_bytes < 4096) return Status::InvalidArgument("shard size must be at least 4096 bytes");
  if (o.samples_per_shard == 0) return Status::InvalidArgument("samples per shard must be at least 1");
  return Status::OK();
}

namespace {

// The options that shape the output, as the manifest records them.
nlohmann::json OptionsToJson(const Format& format, const PackOptions& o) {
  nlohmann::json j = {{"prefix", o.prefix},
                      {"shard_size", o.shard_size_bytes},
                      {"samples_per_shard", o.samples_per_shard},
                      {"shuffle", o.shuffle},
                      {"seed", o.seed},
                      {"keys", o.path_keys ? "path" : "index"},
                      {"check", o.decode_check ? "decode" : "header"},
                      {"max_sample_bytes", o.max_sample_bytes},
                      {"max_pixels", o.max_pixels}};
  format.AddManifestOptions(o, &j);
  return j;
}

class Packer {
 public:
  Packer(PackInput* input, const std::string& source, const std::string& out, const PackOptions& o, Env* env,
         const Format& format)
      : input_(input), source_(source), out_(out), options_(o), env_(env), format_(format) {}

  Status Run(PackResult* result) {
    start_ = Clock::now();
    writer_ = format_.NewWriter(env_, out_, options_);
    bool complete = false;
    if (options_.resume) SHARDPACK_RETURN_IF_ERROR(PrepareResume(result, &complete));
    if (complete) return Status::OK();
    if (!resumed_) {
      for (const SkippedFile& f : input_->initial_skips()) SHARDPACK_RETURN_IF_ERROR(Skip(f));
    }
    Status s = RunPipeline();
    if (interrupted_.load()) s = Status::Aborted("interrupted after " + std::to_string(samples_) + " samples");
    Manifest m = ManifestSoFar();
    // What the dataset's own metadata record may hold: the manifest, less what depends on the
    // finished files.
    nlohmann::json info = ManifestToJson(m);
    info.erase("shardlist");
    info.erase("bytes");
    std::vector<ShardEntry> shards;
    if (s.ok()) s = writer_->Finish(info, &shards);
    if (!s.ok()) {
      writer_->Abandon();
      return WithResumeHint(s);
    }
    if (samples_ == 0) {
      return Status::InvalidArgument("no images to pack in " + source_ + " (" + std::to_string(m.skipped.size()) +
                                     " files skipped)");
    }
    m.shards = std::move(shards);
    for (const ShardEntry& e : m.shards) m.bytes += e.bytes;
    SHARDPACK_RETURN_IF_ERROR(WriteManifest(env_, out_, m));
    // The manifest is in place, so the dataset is complete: the journal has done its work.
    const std::string journal = JoinPath(out_, kPackJournalFileName);
    if (env_->FileExists(journal)) SHARDPACK_RETURN_IF_ERROR(env_->RemoveFile(journal));
    result->manifest = std::move(m);
    result->bytes_read = bytes_read_;
    result->seconds = SecondsSince(start_);
    ReportProgress(/*force=*/true);
    return Status::OK();
  }

 private:
  // The manifest of what is packed so far (without the shard list).
  Manifest ManifestSoFar() const {
    Manifest m;
    m.name = BaseName(out_);
    m.format = format_.id();
    m.wids_shard_list = format_.manifest_is_wids_shard_list();
    m.tool_version = SHARDPACK_VERSION;
    m.options_json = OptionsToJson(format_, options_).dump();
    m.classes = input_->class_names();
    m.empty_classes = input_->empty_classes();
    m.samples = samples_;
    m.skipped = skipped_;
    return m;
  }

  // What a resumed run must share with the run it continues.
  nlohmann::json Fingerprint() const {
    char real[PATH_MAX];
    const std::string source = ::realpath(source_.c_str(), real) ? std::string(real) : source_;
    return {{"source", source},
            {"list_file", options_.list_file},
            {"format", std::string(format_.name())},
            {"options", OptionsToJson(format_, options_)},
            {"inputs", input_->expected() + input_->initial_skips().size()},
            {"classes", input_->class_names()},
            {"shardpack_version", SHARDPACK_VERSION}};
  }

  // pack --resume: finds what an earlier run in OUT completed and sets up to continue after it.
  // *complete: OUT already holds the finished dataset of this source and these options.
  Status PrepareResume(PackResult* result, bool* complete) {
    const std::string journal_path = JoinPath(out_, kPackJournalFileName);
    if (env_->FileExists(JoinPath(out_, kManifestFileName))) {
      Manifest existing;
      SHARDPACK_RETURN_IF_ERROR(ReadManifest(env_, out_, &existing));
      if (existing.format != format_.id() || existing.options_json != OptionsToJson(format_, options_).dump() ||
          existing.classes != input_->class_names()) {
        return Status::InvalidArgument("output folder " + out_ +
                                       " holds a finished dataset packed from another source or with other options; "
                                       "use --force to replace it");
      }
      if (env_->FileExists(journal_path)) SHARDPACK_RETURN_IF_ERROR(env_->RemoveFile(journal_path));
      result->manifest = std::move(existing);
      *complete = true;
      return Status::OK();
    }
    PackJournal journal;
    Status s = ReadPackJournal(env_, out_, &journal);
    if (s.code() == Status::Code::kNotFound) {
      // No shard was completed: start afresh, clearing what the earlier run left (our files only).
      return RemoveOurOutputFiles(env_, out_);
    }
    SHARDPACK_RETURN_IF_ERROR(s);
    if (journal.fingerprint != Fingerprint()) {
      return Status::InvalidArgument(journal_path +
                                     ": the interrupted pack in this folder had another source or other options; "
                                     "rerun it with the same ones, or use --force to start over");
    }
    for (const ShardEntry& shard : journal.progress.shards) {
      uint64_t size = 0;
      if (!env_->GetFileSize(JoinPath(out_, shard.file), &size).ok() || size != shard.bytes) {
        return Status::DataLoss(JoinPath(out_, shard.file) + " is missing or not the size the journal records (" +
                                std::to_string(shard.bytes) + " bytes); use --force to start over");
      }
    }
    SHARDPACK_RETURN_IF_ERROR(RemoveTemporaryFiles(env_, out_));
    SHARDPACK_RETURN_IF_ERROR(writer_->ResumeAfter(journal.progress.shards));
    samples_ = journal.progress.samples;
    skipped_ = journal.progress.skipped;
    files_skipped_ = skipped_.size();
    files_done_ = journal.input_position;
    resume_position_ = journal.input_position;
    journaled_shards_ = journal.progress.shards.size();
    resumed_ = true;
    return Status::OK();
  }

  // Records the shards published so far; input items from `position` on are not in them.
  Status WriteJournal(uint64_t position) {
    PackJournal journal;
    journal.progress = ManifestSoFar();
    journal.progress.shards = writer_->published();
    journal.progress.samples = 0;
    for (const ShardEntry& e : journal.progress.shards) journal.progress.samples += e.samples;
    journal.input_position = position;
    journal.fingerprint = Fingerprint();
    journaled_shards_ = journal.progress.shards.size();
    return WritePackJournal(env_, out_, journal, options_.sync);
  }

  // An error after some shards were completed: say that they are kept and how to continue.
  Status WithResumeHint(const Status& s) const {
    if (journaled_shards_ == 0) return s;
    const std::string kept = std::to_string(journaled_shards_) + " complete shard" +
                             (journaled_shards_ == 1 ? "" : "s") + " kept in " + out_ +
                             "; rerun the same command with --resume to continue";
    return s.code() == Status::Code::kAborted ? s.WithSuffix("; " + kept) : s.WithSuffix(" (" + kept + " once fixed)");
  }

  static std::string BaseName(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }

  Status Skip(const SkippedFile& f) {
    skipped_.push_back(f);
    ++files_skipped_;
    if (options_.on_skip) options_.on_skip(f);
    if (options_.strict) {
      return Status::Aborted(f.path + ": " + f.reason + " (--strict stops at the first bad input)");
    }
    return Status::OK();
  }

  void LoadAndProbe(PackItem* item) const {
    if (!item->status.ok()) return;
    if (!item->loaded) {
      item->status = input_->Load(item);
      if (!item->status.ok()) return;
    }
    item->status = ProbeImage(item->bytes, &item->info);
    if (!item->status.ok()) return;
    const uint64_t pixels = uint64_t(item->info.width) * item->info.height;
    if (pixels > options_.max_pixels) {
      item->status = Status::Corrupt("image declares " + std::to_string(item->info.width) + "x" +
                                     std::to_string(item->info.height) + " pixels, more than --max-pixels " +
                                     std::to_string(options_.max_pixels));
      return;
    }
    item->status = format_.PrepareSample(options_, item);
  }

  Status Write(PackItem* item) {
    ++files_done_;
    if (!item->status.ok()) return Skip({item->relpath, item->status.message()});
    bytes_read_ += item->bytes.size();
    const std::string key = item->key.empty() ? IndexKey(samples_) : item->key;
    const std::vector<std::string>& classes = input_->class_names();
    Sample sample;
    sample.key = key;
    sample.label = item->label;
    if (item->label >= 0 && static_cast<size_t>(item->label) < classes.size()) sample.class_name = classes[item->label];
    sample.relpath = item->relpath;
    if (!item->extra.is_null()) sample.extra = &item->extra;
    sample.image = item->info;
    sample.bytes = item->bytes;
    sample.bytes_xxh64 = item->bytes_xxh64;
    sample.pixels = &item->pixels;
    SHARDPACK_RETURN_IF_ERROR(writer_->Add(sample));
    // Adding this sample published the shard before it: journal that shard, which holds everything
    // up to (not including) this item.
    if (writer_->published().size() > journaled_shards_) SHARDPACK_RETURN_IF_ERROR(WriteJournal(item->position));
    ++samples_;
    ReportProgress(false);
    return Status::OK();
  }

  // The pipeline's first stage: the input's next item into the next slot; nullptr at the end, on
  // an input error (in *input_error) or when stopping.
  PackItem* ReadStage(std::vector<PackItem>& slots, size_t& next, const std::atomic<bool>& stop, Status* input_error) {
    PackItem* item = &slots[next % slots.size()];
    HappensAfter(item);  // the item that last used this slot has left the write stage
    item->status = Status::OK();
    item->bytes_xxh64.reset();
    bool done = stop.load();
    if (!done && options_.cancel && options_.cancel->load()) {
      interrupted_.store(true);
      *input_error = Status::Aborted("interrupted");
      done = true;
    }
    if (!done) *input_error = input_->Next(item, &done);
    if (done || !input_error->ok()) return nullptr;
    item->position = next++;
    HappensBefore(item);
    return item;
  }

  Status RunPipeline() {
    const int threads = WorkerThreads(options_.threads);
    const size_t tokens = static_cast<size_t>(threads) * 4;
    std::vector<PackItem> slots(tokens);
    // Resuming: the items before resume_position_ are in the kept shards or were skipped already.
    for (uint64_t i = 0; i < resume_position_; ++i) {
      bool done = false;
      SHARDPACK_RETURN_IF_ERROR(input_->Next(&slots[0], &done));
      if (done) return Status::DataLoss(source_ + " has fewer inputs than the journal of the interrupted pack records");
    }
    size_t next = resume_position_;
    std::atomic<bool> stop{false};
    Status input_error;
    Status error;
    // Tokens for the ThreadSanitizer annotations (ground/tsan_annotations.h): one per serial stage, and
    // each slot for the item in it. What happens here, before the pipeline, precedes both stages.
    const char read_stage = 0, write_stage = 0;
    HappensBefore(&read_stage);
    HappensBefore(&write_stage);
    try {
      tbb::task_arena arena(threads);
      arena.execute([&] {
        tbb::parallel_pipeline(
            tokens, tbb::make_filter<void, PackItem*>(tbb::filter_mode::serial_in_order,
                                                      [&](tbb::flow_control& fc) -> PackItem* {
                                                        HappensAfter(&read_stage);
                                                        PackItem* item = ReadStage(slots, next, stop, &input_error);
                                                        HappensBefore(&read_stage);
                                                        if (item == nullptr) fc.stop();
                                                        return item;
                                                      }) &
                        tbb::make_filter<PackItem*, PackItem*>(tbb::filter_mode::parallel,
                                                               [&](PackItem* item) {
                                                                 HappensAfter(item);
                                                                 if (!stop.load()) LoadAndProbe(item);
                                                                 HappensBefore(item);
                                                                 return item;
                                                               }) &
                        tbb::make_filter<PackItem*, void>(tbb::filter_mode::serial_in_order, [&](PackItem* item) {
                          HappensAfter(item);
                          HappensAfter(&write_stage);
                          if (!stop.load()) {
                            Status s = Write(item);
                            if (!s.ok()) {
                              error = s;
                              stop.store(true);
                            }
                          }
                          HappensBefore(&write_stage);
                          HappensBefore(item);  // the slot is free for the read stage again
                        }));
      });
    } catch (const std::exception& e) {
      return Status::IOError(std::string("pack pipeline failed: ") + e.what());
    }
    HappensAfter(&read_stage);
    HappensAfter(&write_stage);
    return error.ok() ? input_error : error;
  }

  void ReportProgress(bool force) {
    if (!options_.on_progress) return;
    auto now = Clock::now();
    if (!force && now - last_progress_ < std::chrono::milliseconds(100)) return;
    last_progress_ = now;
    PackProgress p;
    const uint64_t initial = input_->initial_skips().size();
    p.files_done = files_done_ + initial;
    p.files_total = input_->expected() + initial;
    p.bytes_read = bytes_read_;
    p.samples_packed = samples_;
    p.files_skipped = files_skipped_;
    p.elapsed_seconds = SecondsSince(start_);
    options_.on_progress(p);
  }

  PackInput* input_;
  const std::string source_, out_;
  const PackOptions& options_;
  Env* env_;
  const Format& format_;
  Clock::time_point start_, last_progress_;
  std::unique_ptr<DatasetWriter> writer_;
  std::vector<SkippedFile> skipped_;
  uint64_t samples_ = 0, files_done_ = 0, files_skipped_ = 0, bytes_read_ = 0;
  uint64_t resume_position_ = 0;  // input items a resumed run skips
  size_t journaled_shards_ = 0;   // shards the journal lists
  bool resumed_ = false;
  std::atomic<bool> interrupted_{false};  // options_.cancel stopped the pipeline
};

}  // namespace

Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result) {
  *result = PackResult();
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  return Packer(input, source, out, options, env, *format).Run(result);
}

}  // namespace shardpack
