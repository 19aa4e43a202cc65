// The pack pipeline, shared by pack and convert: the ordered pipeline (ground/ordered_pipeline.h) over
// a PackInput:
//   1. serial, in order:  the input's next sample, into a reused buffer slot
//   2. parallel:          load its bytes (files), probe the image, decode + transform it (raw)
//   3. serial, in order:  report skips, assign the key, append to the format's DatasetWriter
// Stage 3 sees samples in input order whatever the thread count, so output is byte-identical across
// thread counts. At most 4 x threads samples are in flight, each in its own reused buffer, so memory
// is bounded by that many x max_sample_bytes, not by the dataset's size. The counts and progress
// live in PackTally (pack_tally.h), --resume in pack_resume.h.
#include "ops/pack/pack_pipeline.h"

#include <atomic>
#include <memory>
#include <vector>

#include "formats/registry/registry.h"
#include "ground/manifest_json.h"
#include "ground/ordered_pipeline.h"
#include "ground/sample_keys.h"
#include "ground/worker_threads.h"
#include "ops/pack/pack_journal.h"
#include "ops/pack/pack_partition.h"
#include "ops/pack/pack_resume.h"
#include "ops/pack/pack_tally.h"
#include "ops/pack/resolution_bound.h"
#include "ops/pack/sample_fields.h"
#include "shardpack/image.h"

namespace shardpack {

Status ValidatePackOptions(const PackOptions& o) {
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(o.format, &format));
  SHARDPACK_RETURN_IF_ERROR(format->CheckPackOptions(o));
  if (o.prefix.empty() || o.prefix.find_first_of("/.") != std::string::npos) {
    return Status::InvalidArgument("shard prefix '" + o.prefix + "' must be non-empty and contain no '/' or '.'");
  }
  if (o.shard_size_bytes < 4096) return Status::InvalidArgument("shard size must be at least 4096 bytes");
  if (o.samples_per_shard == 0) return Status::InvalidArgument("samples per shard must be at least 1");
  SHARDPACK_RETURN_IF_ERROR(CheckResolutionBound(o));
  if (o.partitions > 1 && o.force) {
    return Status::InvalidArgument(
        "--force cannot be used with --partition: it would remove the other parts' files; remove OUT before the "
        "first part starts, or continue a part with --resume");
  }
  PartPlan unused;  // PlanPart's own check of the part number, before anything is created
  return PlanPart(0, 1, o.partition, o.partitions, &unused);
}

namespace {

// One part of a partitioned pack: its plan, and the whole pack's fingerprint, which every part
// records in its part manifest for Merge to compare.
struct PartOfPack {
  PartPlan plan;
  nlohmann::json source;
};

// One pack (or one part of one): the pipeline's three stages filled in (ground/ordered_pipeline.h),
// the journal of the shards it publishes, and the manifest (or part manifest) at the end.
class Packer {
 public:
  Packer(PackInput* input, const std::string& source, const std::string& out, const PackOptions& o, Env* env,
         const Format& format, const PartOfPack* part)
      : input_(input),
        source_(source),
        out_(out),
        options_(o),
        env_(env),
        format_(format),
        part_(part),
        files_(part ? PartFiles(*part) : WholePackFiles(env, out)),
        tally_(o, *input) {}

  Status Run(PackResult* result) {
    if (part_ != nullptr && !part_->plan.by_count) {
      // Parts cut by size name their shards with a prefix of their own; the options the manifest
      // records keep the one the user gave.
      PackOptions o = options_;
      o.prefix = part_->plan.shard_prefix;
      writer_ = format_.NewWriter(env_, out_, o);
    } else {
      writer_ = format_.NewWriter(env_, out_, options_);
    }
    if (part_ != nullptr) SHARDPACK_RETURN_IF_ERROR(StartPart());
    if (options_.resume || (part_ != nullptr && !part_->plan.writer)) {  // a writer does not resume
      bool complete = false;
      SHARDPACK_RETURN_IF_ERROR(Resume(result, &complete));
      if (complete) return Status::OK();
    }
    if (!resumed_) {  // a resumed run listed them before
      for (const SkippedFile& f : input_->initial_skips()) SHARDPACK_RETURN_IF_ERROR(tally_.Skip(f));
    }
    Status s = RunPipeline();
    if (interrupted_.load()) s = Status::Aborted("interrupted after " + std::to_string(tally_.samples()) + " samples");
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
    // A part may be empty (more parts than shards) or hold only skips: Merge counts the whole.
    if (tally_.samples() == 0 && part_ == nullptr) {
      return Status::InvalidArgument("no images to pack in " + source_ + " (" + std::to_string(m.skipped.size()) +
                                     " files skipped)");
    }
    m.shards = std::move(shards);
    for (const ShardEntry& e : m.shards) m.bytes += e.bytes;
    SHARDPACK_RETURN_IF_ERROR(part_ ? WritePartManifest(env_, out_, part_->plan, m, part_->source)
                                    : WriteManifest(env_, out_, m));
    // The manifest is in place, so the dataset (or part) is complete: the journal has done its work.
    const std::string journal = JoinPath(out_, files_.journal);
    if (env_->FileExists(journal)) SHARDPACK_RETURN_IF_ERROR(env_->RemoveFile(journal));
    result->manifest = std::move(m);
    result->bytes_read = tally_.bytes_read();
    result->seconds = tally_.seconds();
    result->reencoded = reencoded_;
    result->cmyk_to_rgb = cmyk_to_rgb_;
    tally_.Report(/*force=*/true);
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
    m.options_json = PackOptionsJson(format_, options_).dump();
    m.classes = input_->class_names();
    m.empty_classes = input_->empty_classes();
    m.samples = tally_.samples();
    m.skipped = tally_.skipped();
    return m;
  }

  // The state files of one part: its part manifest, its journal, its own shards.
  PackStateFiles PartFiles(const PartOfPack& part) const {
    PackStateFiles files;
    files.finished = part.plan.manifest_file();
    files.journal = part.plan.journal_file();
    const std::string path = JoinPath(out_, files.finished);
    Env* env = env_;
    files.read_finished = [env, path](Manifest* m) {
      PartPlan plan;
      nlohmann::json source;
      return ReadPartManifest(env, path, m, &plan, &source);
    };
    files.owns = [plan = part.plan, prefix = options_.prefix](const std::string& name) {
      return name == plan.manifest_file() || name == plan.journal_file() || IsPartShardFile(name, prefix, plan);
    };
    return files;
  }

  // A part numbers its shards from its share; without --resume it must find none of its files.
  Status StartPart() {
    const PartPlan& plan = part_->plan;
    const Status s = plan.by_count ? writer_->SetShardRange(plan.first_shard, plan.end_shard)
                                   : writer_->SetShardRange(0, UINT64_MAX);
    if (s.code() == Status::Code::kUnsupported && plan.writer) {
      return Status::InvalidArgument("parts: the " + std::string(format_.name()) +
                                     " format writes one file, which cannot be written in parts; write wds or raw "
                                     "in parts and convert the merged dataset");
    }
    if (s.code() == Status::Code::kUnsupported) {
      return Status::InvalidArgument("--partition: the " + std::string(format_.name()) +
                                     " format writes one file, which cannot be packed in parts; pack wds or raw in "
                                     "parts and convert the merged dataset");
    }
    SHARDPACK_RETURN_IF_ERROR(s);
    // A writer's part is written afresh: what an earlier run of it left (its own files only) goes.
    if (plan.writer) return RemoveOurOutputFiles(env_, out_, files_.owns);
    if (options_.resume) return Status::OK();
    const std::string what = "part " + std::to_string(plan.part) + " of " + std::to_string(plan.parts);
    if (env_->FileExists(JoinPath(out_, files_.journal))) {
      return Status::InvalidArgument(JoinPath(out_, files_.journal) + ": " + what +
                                     " was interrupted here; pass --resume to continue it");
    }
    if (env_->FileExists(JoinPath(out_, files_.finished))) {
      return Status::InvalidArgument(what + " is already finished in " + out_ + " (" + files_.finished +
                                     "); --resume does nothing then, or remove that file to pack the part again");
    }
    return Status::OK();
  }

  // pack --resume (ops/pack/pack_resume.h), and the start of every part. *complete: OUT already holds
  // this finished dataset (or part).
  Status Resume(PackResult* result, bool* complete) {
    ResumePoint point;
    SHARDPACK_RETURN_IF_ERROR(FindResumePoint(env_, out_, files_, ManifestSoFar(),
                                              PackFingerprint(source_, format_, options_, *input_), &point));
    if (point.complete) {
      result->manifest = std::move(point.finished);
      result->already_complete = true;
      *complete = true;
      return Status::OK();
    }
    if (!point.resumed) return Status::OK();
    SHARDPACK_RETURN_IF_ERROR(writer_->ResumeAfter(point.journal.progress.shards));
    tally_.ContinueFrom(point.journal.progress, point.journal.input_position);
    resume_position_ = point.journal.input_position;
    journaled_shards_ = point.journal.progress.shards.size();
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
    journal.fingerprint = PackFingerprint(source_, format_, options_, *input_);
    journaled_shards_ = journal.progress.shards.size();
    return WritePackJournal(env_, out_, journal, options_.sync, files_.journal);
  }

  // An error after some shards were completed: say that they are kept and how to continue.
  Status WithResumeHint(const Status& s) const {
    if (journaled_shards_ == 0) return s;
    const std::string kept = std::to_string(journaled_shards_) + " complete shard" +
                             (journaled_shards_ == 1 ? "" : "s") + " kept in " + out_ +
                             "; rerun the same command with --resume to continue";
    return s.code() == Status::Code::kAborted ? s.WithSuffix("; " + kept) : s.WithSuffix(" (" + kept + " once fixed)");
  }

  // Stage 1: the input's next item. A cancel request (Ctrl-C) ends the input here.
  Status Read(PackItem* item, bool* done) {
    item->status = Status::OK();
    item->bytes_xxh64.reset();
    item->original = ImageInfo();
    item->cmyk_to_rgb = false;
    if (options_.cancel && options_.cancel->load()) {
      interrupted_.store(true);
      return Status::Aborted("interrupted");
    }
    SHARDPACK_RETURN_IF_ERROR(input_->Next(item, done));
    if (!*done) item->position = next_position_++;
    return Status::OK();
  }

  // Stage 2, in parallel: load, probe, check the pixel count, and the format's own work. A failure
  // stays in item->status and becomes a skip in stage 3.
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
    item->status = CheckSampleFields(*item);
    if (!item->status.ok()) return;
    item->status = BoundResolution(options_, item);  // --max-side; nothing without it
    if (!item->status.ok()) return;
    // Of the bytes packed (a re-encoded image has its orientation applied and none left): what the
    // sample table records so that a plan by shape (aspect-ratio buckets) sees the image as shown.
    item->orientation = item->info.format == ImageFormat::kJpeg ? JpegExifOrientation(item->bytes) : 1;
    item->status = format_.PrepareSample(options_, item);
  }

  // Stage 3, in input order: the skip or the sample, and the journal when a shard was published.
  Status Write(PackItem* item) {
    tally_.CountFile();
    const std::string& name = item->report_name.empty() ? item->relpath : item->report_name;
    if (!item->status.ok()) return tally_.Skip({name, item->status.message()});
    // A part's keys count from its first item, so that they are the whole pack's; a writer's part
    // has no first item and prefixes its keys instead.
    const uint64_t first_key = part_ ? part_->plan.begin : 0;
    const std::string key =
        item->key.empty() ? (part_ ? part_->plan.key_prefix : "") + IndexKey(first_key + tally_.samples()) : item->key;
    for (const SampleField& f : item->fields) {
      if (key.size() + 1 + f.name.size() > kMaxMemberNameLength) {
        return tally_.Skip({name, "member name " + key + "." + f.name + " is longer than " +
                                      std::to_string(kMaxMemberNameLength) +
                                      " bytes; use --key index or a shorter field name"});
      }
    }
    const std::vector<std::string>& classes = input_->class_names();
    Sample sample;
    sample.key = key;
    sample.label = item->label;
    if (item->label >= 0 && static_cast<size_t>(item->label) < classes.size()) sample.class_name = classes[item->label];
    sample.relpath = item->relpath;
    if (!item->extra.is_null()) sample.extra = &item->extra;
    sample.image = item->info;
    sample.original = item->original;
    sample.orientation = item->orientation;
    sample.bytes = item->bytes;
    sample.bytes_xxh64 = item->bytes_xxh64;
    sample.pixels = &item->pixels;
    if (!item->masks.empty()) sample.masks = &item->masks;
    // The fields the format keeps; those it does not are reported once the sample is in.
    std::vector<SampleField> kept;
    std::vector<size_t> dropped;
    for (size_t i = 0; i < item->fields.size(); ++i) {
      if (!format_.StoresField(item->fields[i].name)) dropped.push_back(i);
    }
    if (dropped.empty()) {
      if (!item->fields.empty()) sample.fields = &item->fields;
    } else if (dropped.size() < item->fields.size()) {
      for (const SampleField& f : item->fields) {
        if (format_.StoresField(f.name)) kept.push_back(f);
      }
      sample.fields = &kept;
    }
    SHARDPACK_RETURN_IF_ERROR(writer_->Add(sample));
    // Adding this sample published the shard before it: journal that shard, which holds everything
    // up to (not including) this item.
    if (writer_->published().size() > journaled_shards_) SHARDPACK_RETURN_IF_ERROR(WriteJournal(item->position));
    tally_.CountSample(item->bytes.size());
    reencoded_ += item->original.width > 0 ? 1 : 0;
    cmyk_to_rgb_ += item->cmyk_to_rgb ? 1 : 0;
    // Fields an input delivered that the format does not keep (inputs report them before the pack
    // starts instead when it keeps none): listed as files not packed, never dropped silently.
    for (const size_t i : dropped) {
      const bool own_file = i < item->field_relpaths.size() && !item->field_relpaths[i].empty();
      const std::string what = own_file ? item->field_relpaths[i] : name + " (field " + item->fields[i].name + ")";
      SHARDPACK_RETURN_IF_ERROR(tally_.Skip({what, kFieldsNotStored}));
    }
    tally_.Report(false);
    return Status::OK();
  }

  Status RunPipeline() {
    const int threads = WorkerThreads(options_.threads);
    std::vector<PackItem> slots(static_cast<size_t>(threads) * 4);
    // Resuming: the items before resume_position_ are in the kept shards or were skipped already.
    for (uint64_t i = 0; i < resume_position_; ++i) {
      bool done = false;
      SHARDPACK_RETURN_IF_ERROR(input_->Next(&slots[0], &done));
      if (done) return Status::DataLoss(source_ + " has fewer inputs than the journal of the interrupted pack records");
    }
    next_position_ = resume_position_;
    return RunOrderedPipeline(
        "pack pipeline", threads, slots, [this](PackItem* item, bool* done) { return Read(item, done); },
        [this](PackItem* item) { LoadAndProbe(item); }, [this](PackItem* item) { return Write(item); });
  }

  PackInput* input_;
  const std::string source_, out_;
  const PackOptions& options_;
  Env* env_;
  const Format& format_;
  const PartOfPack* const part_;  // nullptr: the whole pack
  const PackStateFiles files_;
  PackTally tally_;
  std::unique_ptr<DatasetWriter> writer_;
  uint64_t resume_position_ = 0;              // input items a resumed run skips
  uint64_t next_position_ = 0;                // the input position of the next item read
  size_t journaled_shards_ = 0;               // shards the journal lists
  bool resumed_ = false;                      // continuing an interrupted run's journal
  std::atomic<bool> interrupted_{false};      // options_.cancel stopped the pipeline
  uint64_t reencoded_ = 0, cmyk_to_rgb_ = 0;  // by the write stage: PackResult's counts
};

}  // namespace

Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result, uint32_t writer_part, uint32_t writer_parts) {
  *result = PackResult();
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  input->KeepFields(format->stores_fields());
  if (options.partitions <= 1 && writer_parts <= 1)
    return Packer(input, source, out, options, env, *format, nullptr).Run(result);
  if (writer_parts > 1) {  // a writer's part: the input's size is not known, nor needed
    PartOfPack part;
    part.source = PackFingerprint(source, *format, options, *input);
    SHARDPACK_RETURN_IF_ERROR(PlanWriterPart(writer_part, writer_parts, options.prefix, &part.plan));
    return Packer(input, source, out, options, env, *format, &part).Run(result);
  }
  if (input->expected() == 0) {
    return Status::InvalidArgument(
        "--partition needs an input whose size is known before packing (a folder, a "
        "--list, or a shardpack dataset); " +
        source + " has none, or is empty");
  }
  PartOfPack part;
  part.source = PackFingerprint(source, *format, options, *input);
  SHARDPACK_RETURN_IF_ERROR(PlanPart(input->expected(), options.samples_per_shard, options.partition,
                                     options.partitions, &part.plan, options.partition_by_count, options.prefix));
  std::unique_ptr<PackInput> part_input = NewPartInput(input, part.plan);
  return Packer(part_input.get(), source, out, options, env, *format, &part).Run(result);
}

Status RunPackPart(Env* env, PackInput* input, const std::string& source, const std::string& out,
                   const PackOptions& options, const PartPlan& plan, PackResult* result) {
  *result = PackResult();
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  input->KeepFields(format->stores_fields());
  PartOfPack part;
  part.plan = plan;
  part.source = PackFingerprint(source, *format, options, *input);
  return Packer(input, source, out, options, env, *format, &part).Run(result);
}

}  // namespace shardpack
