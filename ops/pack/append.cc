// shardpack append: new inputs packed as new shards after a dataset's own, without touching a byte
// of them (issue 42; docs/views.md).
//
// What a kill leaves: the new shards are packed into a staging folder inside the dataset
// (OUT/.append, which shard globs do not see), as a part of a partitioned pack is: numbered after
// the dataset's shards, keys counted after its samples, with a journal that --resume continues
// from and a part manifest once they are complete. Only then are they moved into OUT, and the new
// manifest.json is written last, atomically (WriteManifest). Until that rename OUT's manifest is the
// old one, which lists the old shards only: OUT is the old dataset; after it, the new one. Shards
// moved before a kill are listed by the staging folder's part manifest, which verify reads so that
// it does not take them for strays, and which `append --resume` publishes.
//
// A dataset in an object store (OUT = s3://...) cannot move files: its new shards are packed in a
// local staging folder named after OUT (under the S3 staging parent), then uploaded to their final
// names, which the old manifest does not list, and the new manifest goes up last (the output Env
// uploads a manifest only once every other upload is done). A kill before that leaves the old
// dataset (and shards it does not list, which a new append overwrites); `--resume` on the same
// machine continues from the staging folder.
#include "ops/pack/append.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "formats/registry/registry.h"
#include "ground/checksum.h"
#include "ground/dataset_lock.h"
#include "ground/sample_table.h"
#include "ops/pack/file_tree_input.h"
#include "ops/pack/output_env.h"
#include "ops/pack/pack_partition.h"
#include "ops/pack/pack_pipeline.h"
#include "ops/pack/pack_resume.h"
#include "shardpack/pack.h"
#include "storage/location.h"

namespace shardpack {
namespace {

// The new input's samples, labelled in the dataset's class list: the dataset's classes keep their
// labels, and the input's classes the dataset lacks come after them, in the input's (sorted) order.
// Its empty classes are the input's own (class folders without an image); what is empty after the
// append is worked out when it is published (EmptyClassesAfter).
class AppendInput final : public PackInput {
 public:
  AppendInput(std::unique_ptr<PackInput> input, std::vector<std::string> classes, std::vector<int32_t> labels)
      : input_(std::move(input)), classes_(std::move(classes)), labels_(std::move(labels)) {}

  const std::vector<std::string>& class_names() const override { return classes_; }
  std::vector<std::string> empty_classes() const override { return input_->empty_classes(); }
  std::vector<SkippedFile> initial_skips() const override { return input_->initial_skips(); }
  void KeepFields(bool keep) override { input_->KeepFields(keep); }
  uint64_t expected() const override { return input_->expected(); }
  Status Next(PackItem* item, bool* done) override {
    SHARDPACK_RETURN_IF_ERROR(input_->Next(item, done));
    if (!*done && !labels_.empty() && item->label >= 0) {
      if (size_t(item->label) >= labels_.size()) {
        return Status::DataLoss("label " + std::to_string(item->label) + " of " + item->relpath +
                                " is outside its input's class list");
      }
      item->label = labels_[size_t(item->label)];
    }
    return Status::OK();
  }
  Status Load(PackItem* item) const override { return input_->Load(item); }

 private:
  std::unique_ptr<PackInput> input_;
  const std::vector<std::string> classes_;
  const std::vector<int32_t> labels_;  // the input's label -> the dataset's; empty: as they are
};

// The class list after the append, and the map of the input's labels into it. An input without
// class names (unlabelled files, or a list of integer labels) keeps its
// labels as they are, which only a dataset without class names can take.
Status CombineClasses(const Manifest& dataset, const PackInput& input, const std::string& out, const std::string& src,
                      std::vector<std::string>* classes, std::vector<int32_t>* labels) {
  const std::vector<std::string>& added = input.class_names();
  *classes = dataset.classes;
  labels->clear();
  if (added.empty() && !dataset.classes.empty() && input.expected() > 0) {
    return Status::InvalidArgument(out + "'s samples are labelled by class (" + std::to_string(dataset.classes.size()) +
                                   " classes) but " + src +
                                   " names no class: put its images in class folders (or a --list with class "
                                   "names), as the dataset was packed");
  }
  if (!added.empty() && dataset.classes.empty() && dataset.samples > 0) {
    return Status::InvalidArgument(src + " names classes but " + out +
                                   "'s samples have no class names (packed unlabelled, or from a list of integer "
                                   "labels): append inputs laid out as the dataset's were");
  }
  for (const std::string& name : added) {
    auto at = std::find(classes->begin(), classes->end(), name);
    if (at == classes->end()) at = classes->insert(classes->end(), name);
    labels->push_back(int32_t(at - classes->begin()));
  }
  return Status::OK();
}

// InvalidArgument naming every option (as the manifest and the flag spell it) that differs from
// those `out` was packed with, at once. A writer has no key option to give (it names each sample by
// the key it is given, or by its index), so for a dataset named by paths it is told the way that can.
// `took_dataset_options`: the run gave only some options (the CLI's append) and took the rest.
Status CheckSameOptions(const Manifest& dataset, const Format& format, const PackOptions& options,
                        const std::string& out, bool for_writer, bool took_dataset_options) {
  const nlohmann::json had = nlohmann::json::parse(dataset.options_json, nullptr, false);
  const nlohmann::json now = PackOptionsJson(format, options);
  if (had.is_discarded() || !had.is_object()) {
    return Status::DataLoss(JoinPath(out, kManifestFileName) + ": its \"options\" are not a JSON object");
  }
  std::set<std::string> keys;
  for (const auto& item : had.items()) keys.insert(item.key());
  for (const auto& item : now.items()) keys.insert(item.key());
  std::vector<std::string> differ;
  for (const std::string& key : keys) {
    const auto a = had.find(key), b = now.find(key);
    if (a != had.end() && b != now.end() && *a == *b) continue;
    if (for_writer && key == "keys" && a != had.end() && *a == "path") {
      return Status::InvalidArgument(out +
                                     " was packed with keys \"path\" (each sample named by its file's path), and "
                                     "a writer names samples by the key each is given or by their index: append to "
                                     "it with `shardpack append " +
                                     out + " SRC --key path`, or write a new dataset");
    }
    std::string flag = key == "keys" ? "key" : key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    differ.push_back(key + " " + (a == had.end() ? "unset" : a->dump()) + ", this append gives " +
                     (b == now.end() ? "none" : b->dump()) + " (--" + flag + ")");
  }
  if (differ.empty()) return Status::OK();
  std::string list;
  for (const std::string& d : differ) list += (list.empty() ? "" : "; with ") + d;
  return Status::InvalidArgument(
      out + " was packed with " + list +
      (took_dataset_options ? ": leave those flags out (an append takes the dataset's own options), or give them "
                              "as its manifest.json's \"options\" records them"
                            : ": append with the options the dataset was packed with (its manifest.json's "
                              "\"options\")"));
}

// For each option `had` (a manifest's "options") records and `given` does not name, the dataset's
// value in *o: an append needs none of the flags the dataset was packed with.
Status TakeDatasetOptions(const Format& format, const nlohmann::json& had, const std::set<std::string>& given,
                          PackOptions* o) {
  const auto take = [&](const char* key) { return !given.count(key) && had.contains(key); };
  try {
    if (take("prefix")) o->prefix = had.at("prefix").get<std::string>();
    if (take("shard_size")) o->shard_size_bytes = had.at("shard_size").get<uint64_t>();
    if (take("samples_per_shard")) o->samples_per_shard = had.at("samples_per_shard").get<uint64_t>();
    if (take("shuffle")) o->shuffle = had.at("shuffle").get<bool>();
    if (take("seed")) o->seed = had.at("seed").get<uint64_t>();
    if (take("keys")) o->path_keys = had.at("keys").get<std::string>() == "path";
    if (take("check")) o->decode_check = had.at("check").get<std::string>() == "decode";
    if (take("max_sample_bytes")) o->max_sample_bytes = had.at("max_sample_bytes").get<uint64_t>();
    if (take("max_pixels")) o->max_pixels = had.at("max_pixels").get<uint64_t>();
    // The options written only when not the default: absent means the default.
    if (!given.count("layout")) {
      o->layout = had.value("layout", "") == "samples" ? SourceLayout::kSamples : SourceLayout::kImageNet;
    }
    if (!given.count("max_side")) {
      o->max_side = had.contains("max_side") ? had.at("max_side").at("side").get<uint32_t>() : 0;
      o->max_side_of_short = had.contains("max_side") && had.at("max_side").at("of").get<std::string>() == "short";
      if (had.contains("max_side")) o->jpeg_quality = had.at("max_side").at("jpeg_quality").get<int>();
    }
    if (!given.count("lossless_as_jpeg")) {
      o->lossless_as_jpeg = had.contains("lossless_as_jpeg");
      if (o->lossless_as_jpeg) o->jpeg_quality = had.at("lossless_as_jpeg").at("jpeg_quality").get<int>();
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::DataLoss(std::string("the manifest's options are not as pack writes them: ") + e.what());
  }
  return format.TakeManifestOptions(had, given, o);
}

// The number after the largest of the dataset's shards named "<prefix>-<number>.<ext>" (0 if none):
// where the appended shards' numbers start.
uint64_t NextShardNumber(const Manifest& dataset, const std::string& prefix) {
  uint64_t next = 0;
  for (const ShardEntry& e : dataset.shards) {
    if (e.file.rfind(prefix + "-", 0) != 0) continue;
    const std::string rest = e.file.substr(prefix.size() + 1);
    const size_t dot = rest.find('.');
    const std::string digits = rest.substr(0, dot);
    if (digits.empty() || digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      continue;
    }
    next = std::max<uint64_t>(next, std::stoull(digits) + 1);
  }
  return next;
}

// Every file of the shards `shards` lists (the shard, its index, sample table and side files).
std::vector<std::string> FilesOf(const std::vector<ShardEntry>& shards) {
  std::vector<std::string> files;
  for (const ShardEntry& e : shards) {
    files.push_back(e.file);
    if (!e.index.file.empty()) files.push_back(e.index.file);
    if (!e.sample_table.file.empty()) files.push_back(e.sample_table.file);
    for (const SideFile& f : e.side_files) files.push_back(f.file);
  }
  return files;
}

// Removes the staging folder's files (the part's state, once its shards are published or when
// there were none), then the folder.
Status ClearStaging(Env* env, const std::string& staging) {
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(staging, &entries));
  for (const DirEntry& e : entries) {
    if (e.type == DirEntry::Type::kFile) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(JoinPath(staging, e.name)));
  }
  const Status removed = env->RemoveEmptyDir(staging);
  return removed.code() == Status::Code::kUnsupported ? Status::OK() : removed;
}

// The classes without a sample once `staged` is published in `out` (its shards there by now):
// those listed empty before (by the dataset, or by the append's input: a class folder without an
// image) and the append's new classes, less every class a sample of either now has. A writer's input
// lists no empty classes, so its sample tables say which classes it gave samples.
Status EmptyClassesAfter(Env* env, const std::string& out, const Manifest& dataset, const Manifest& staged,
                         std::vector<std::string>* empty) {
  std::set<std::string> has, candidates(dataset.empty_classes.begin(), dataset.empty_classes.end());
  candidates.insert(staged.empty_classes.begin(), staged.empty_classes.end());
  for (size_t i = dataset.classes.size(); i < staged.classes.size(); ++i) candidates.insert(staged.classes[i]);
  for (const std::string& c : dataset.classes) {
    if (!std::count(dataset.empty_classes.begin(), dataset.empty_classes.end(), c)) has.insert(c);
  }
  for (const ShardEntry& shard : staged.shards) {
    std::vector<SampleRecord> records;
    SHARDPACK_RETURN_IF_ERROR(ReadSampleTable(env, out, shard, &records));
    for (const SampleRecord& r : records) {
      if (r.label >= 0 && size_t(r.label) < staged.classes.size()) has.insert(staged.classes[size_t(r.label)]);
    }
  }
  empty->clear();
  for (const std::string& c : staged.classes) {
    if (candidates.count(c) && !has.count(c)) empty->push_back(c);
  }
  return Status::OK();
}

// Copies the local file `from` to `to` in the object store, through `out_env`: written as
// `to`.tmp (not published), then renamed, which uploads it.
Status UploadStagedFile(Env* env, const std::string& from, Env* out_env, const std::string& to) {
  std::unique_ptr<SequentialFile> in;
  SHARDPACK_RETURN_IF_ERROR(env->NewSequentialFile(from, &in));
  std::unique_ptr<WritableFile> file;
  SHARDPACK_RETURN_IF_ERROR(out_env->NewWritableFile(to + ".tmp", &file));
  std::string buffer(4 << 20, '\0');
  for (size_t n = 1; n > 0;) {
    SHARDPACK_RETURN_IF_ERROR(in->Read(buffer.size(), buffer.data(), &n));
    if (n > 0) SHARDPACK_RETURN_IF_ERROR(file->Append(std::string_view(buffer.data(), n)));
  }
  SHARDPACK_RETURN_IF_ERROR(file->Close());
  return out_env->RenameFile(to + ".tmp", to);
}

// Moves the staged shards into OUT (uploads them, for an object store) and writes its new
// manifest (the old one's, with them, and a generation more), then clears the staging folder. Each
// step can be repeated after a kill: a file already moved is found in OUT (one uploaded goes up
// again); a manifest that lists the staged shards already is not written again.
// `source`: the staged part's fingerprint (PackFingerprint), recorded as the generation's last_append.
Status Publish(Env* env, const AppendTarget& target, const Manifest& staged, const nlohmann::json& source,
               Manifest* published) {
  const std::string& out = target.out;
  const std::string& staging = target.staging;
  const Manifest& dataset = target.dataset;
  Env* out_env = target.out_env;
  std::map<std::string, std::string> listed;  // the dataset's shard files -> xxh64
  for (const ShardEntry& e : dataset.shards) listed[e.file] = e.xxh64;
  const bool done =
      !staged.shards.empty() && std::all_of(staged.shards.begin(), staged.shards.end(), [&](const ShardEntry& e) {
        const auto at = listed.find(e.file);
        return at != listed.end() && at->second == e.xxh64;
      });
  if (done) {
    *published = dataset;  // killed after the manifest, before the staging folder was cleared
  } else {
    std::set<std::string> taken;
    for (const std::string& f : FilesOf(dataset.shards)) taken.insert(f);
    for (const std::string& f : FilesOf(staged.shards)) {
      if (taken.count(f)) {
        return Status::InvalidArgument(JoinPath(staging, f) + " would replace " + JoinPath(out, f) +
                                       ", a file of the dataset; remove " + staging + " and append again");
      }
      const std::string from = JoinPath(staging, f), to = JoinPath(out, f);
      if (target.remote) {
        if (!env->FileExists(from)) {
          return Status::DataLoss(from + " is missing: remove " + staging + " and append again");
        }
        SHARDPACK_RETURN_IF_ERROR(UploadStagedFile(env, from, out_env, to));
      } else if (env->FileExists(from)) {
        SHARDPACK_RETURN_IF_ERROR(env->RenameFile(from, to));
      } else if (!env->FileExists(to)) {
        return Status::DataLoss(from + " is missing, and is not in " + out + " either: remove " + staging +
                                " and append again");
      }
    }
    if (!target.remote) SHARDPACK_RETURN_IF_ERROR(env->SyncDir(out));
    Manifest m = dataset;
    m.tool_version = SHARDPACK_VERSION;
    m.classes = staged.classes;
    // The new shards' sample tables: in OUT by now, or still in the staging folder (uploaded).
    SHARDPACK_RETURN_IF_ERROR(EmptyClassesAfter(env, target.remote ? staging : out, dataset, staged, &m.empty_classes));
    m.samples += staged.samples;
    m.bytes += staged.bytes;
    m.skipped.insert(m.skipped.end(), staged.skipped.begin(), staged.skipped.end());
    m.shards.insert(m.shards.end(), staged.shards.begin(), staged.shards.end());
    m.generation = dataset.generation + 1;
    m.last_append_source = target.for_writer ? "" : source.value("source", "");
    m.last_append_fingerprint = target.for_writer ? "" : ChecksumHex(Xxh64(source.dump()));
    SHARDPACK_RETURN_IF_ERROR(WriteManifest(out_env, out, m));  // the new dataset from here on
    *published = std::move(m);
  }
  return ClearStaging(env, staging);
}

// Whether the staging folder holds anything.
bool HoldsAnything(Env* env, const std::string& dir) {
  std::vector<DirEntry> entries;
  return env->ListDir(dir, &entries).ok() && !entries.empty();
}

}  // namespace

Status OpenAppendTarget(Env* env, const std::string& out, const PackOptions& given_options, bool for_writer,
                        const std::string& what, AppendTarget* target) {
  *target = AppendTarget();
  PackOptions& options = target->options;
  options = given_options;
  if (options.partitions > 1) return Status::InvalidArgument("--partition is for pack; append in one run");
  if (options.force) return Status::InvalidArgument("--force would replace the dataset; append keeps it");
  Location out_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out, &out_location));
  // OUT in an object store: read and written through the Env that uploads into it (refused, with
  // the way out, for a store that cannot be written); the shards are staged on local disk. Made for
  // the format given; made again below if the dataset's turns out another.
  target->out_env = env;
  target->remote = out_location.remote();
  std::string staging = JoinPath(out, kAppendStagingFolder);
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  const auto open_out_env = [&]() -> Status {
    if (!target->remote) return Status::OK();
    std::unique_ptr<Env> holder;
    SHARDPACK_RETURN_IF_ERROR(OutputEnvFor(out_location, format, options.remote, env, &holder, &target->out_env));
    target->out_env_holder = std::move(holder);
    return Status::OK();
  };
  SHARDPACK_RETURN_IF_ERROR(open_out_env());
  if (target->remote) {
    const std::string& parent = options.remote.s3.staging_parent;
    staging = JoinPath(parent.empty() ? "/tmp" : parent, "shardpack-append-" + ChecksumHex(Xxh64(out_location.shown)));
  }
  if (!target->remote && env->FileExists(out)) {
    // Before the manifest is read: a second run must read what the first one published.
    std::unique_ptr<DatasetFolderLock> lock;
    SHARDPACK_RETURN_IF_ERROR(LockDatasetFolder(env, out, what, &lock));
    target->lock = std::move(lock);
  }
  Status s = ReadManifest(target->out_env, out, &target->dataset);
  if (s.code() == Status::Code::kNotFound) {
    return Status::NotFound(out + " holds no dataset (no manifest.json): pack it first");
  }
  SHARDPACK_RETURN_IF_ERROR(s);
  SHARDPACK_RETURN_IF_ERROR(CheckManifestChecksum(target->out_env, out));
  const DatasetFormat had_format = target->dataset.format;
  const Format* dataset_format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(had_format, &dataset_format));
  if (!dataset_format->reads_shards_through_env()) {
    return Status::InvalidArgument(out + " is an " + std::string(dataset_format->name()) +
                                   " dataset, one environment file, which append cannot add to without rewriting "
                                   "it: convert it to wds or raw (shardpack convert " +
                                   out + " NEW --format wds) and append to that, or pack again with the new images");
  }
  const bool take = options.append_given.has_value();
  if (take) {
    if (!options.append_given->count("format")) options.format = had_format;
    const nlohmann::json had = nlohmann::json::parse(target->dataset.options_json, nullptr, false);
    if (had.is_object()) {
      SHARDPACK_RETURN_IF_ERROR(TakeDatasetOptions(*dataset_format, had, *options.append_given, &options)
                                    .WithPrefix(JoinPath(out, kManifestFileName) + ": "));
    }
  }
  if (had_format != options.format) {
    return Status::InvalidArgument(out + " is a " + std::string(DatasetFormatName(had_format)) +
                                   " dataset, and this append gives --format " +
                                   std::string(DatasetFormatName(options.format)));
  }
  if (format != dataset_format) {
    format = dataset_format;
    SHARDPACK_RETURN_IF_ERROR(open_out_env());
  }
  SHARDPACK_RETURN_IF_ERROR(ValidatePackOptions(options));
  SHARDPACK_RETURN_IF_ERROR(CheckSameOptions(target->dataset, *format, options, out, for_writer, take));
  target->out = out;
  target->for_writer = for_writer;
  target->staging = staging;
  target->publish_only = env->FileExists(JoinPath(target->staging, kAppendStagedManifest));
  if (for_writer && HoldsAnything(env, target->staging)) {
    // A writer cannot continue what another run wrote, nor tell whether that was its own samples.
    return Status::InvalidArgument(
        "an earlier append to " + out + " was interrupted (" + target->staging +
        " holds its shards so far): finish it with `shardpack append " + out +
        " SRC --resume` (same SRC and options) if it was one, or remove " + target->staging +
        " to drop it, before appending more" +
        (target->publish_only ? " (it was publishing: removing it then leaves shards the manifest does not list)"
                              : ""));
  }
  if (target->publish_only && !options.resume) {
    return Status::InvalidArgument("an earlier append to " + out +
                                   " was interrupted while it published its shards; rerun it with --resume to "
                                   "finish it");
  }
  if (!target->publish_only && HoldsAnything(env, target->staging) && !options.resume) {
    return Status::InvalidArgument("an earlier append to " + out + " was interrupted (" + target->staging +
                                   " holds its shards so far): rerun it with --resume to continue it, with the same "
                                   "SRC and options, or remove " +
                                   target->staging + " to start over");
  }
  return Status::OK();
}

std::vector<std::string> AppendedClassList(const Manifest& dataset, const std::vector<std::string>& classes) {
  std::vector<std::string> all = dataset.classes;
  for (const std::string& c : classes) {
    if (std::find(all.begin(), all.end(), c) == all.end()) all.push_back(c);
  }
  return all;
}

Status FinishInterruptedAppend(Env* env, const AppendTarget& target, PackResult* result) {
  Manifest staged;
  PartPlan plan;
  nlohmann::json source;
  SHARDPACK_RETURN_IF_ERROR(
      ReadPartManifest(env, JoinPath(target.staging, kAppendStagedManifest), &staged, &plan, &source));
  SHARDPACK_RETURN_IF_ERROR(Publish(env, target, staged, source, &result->manifest));
  result->already_complete = true;
  return Status::OK();
}

Status PackAppend(Env* env, PackInput* input, const std::string& source, const PackOptions& options,
                  const AppendTarget& target, bool discard_on_failure, PackResult* result) {
  *result = PackResult();
  SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(target.staging));
  // One part of one: shards numbered after the dataset's, keys after its samples.
  PartPlan plan;
  SHARDPACK_RETURN_IF_ERROR(PlanPart(input->expected(), options.samples_per_shard, 0, 1, &plan));
  plan.begin = target.dataset.samples;
  plan.end = target.dataset.samples + input->expected();
  plan.first_shard = NextShardNumber(target.dataset, options.prefix);
  plan.end_shard = UINT64_MAX;
  PackResult staged;
  const Status s = RunPackPart(env, input, source, target.staging, options, plan, &staged);
  if (!s.ok()) {
    // Complete shards stay, with the journal --resume continues from; a run that got none, or that
    // cannot be resumed (a writer's), leaves nothing.
    if (discard_on_failure) {
      (void)ClearStaging(env, target.staging);
    } else if (!HoldsAnything(env, target.staging)) {
      (void)env->RemoveEmptyDir(target.staging);
    }
    return s;
  }
  if (staged.manifest.samples == 0) {
    SHARDPACK_RETURN_IF_ERROR(ClearStaging(env, target.staging));
    return Status::InvalidArgument("no images to add from " + source + " (" +
                                   std::to_string(staged.manifest.skipped.size()) + " skipped); " + target.out +
                                   " is unchanged");
  }
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  SHARDPACK_RETURN_IF_ERROR(
      Publish(env, target, staged.manifest, PackFingerprint(source, *format, options, *input), &result->manifest));
  result->bytes_read = staged.bytes_read;
  result->seconds = staged.seconds;
  result->reencoded = staged.reencoded;
  result->cmyk_to_rgb = staged.cmyk_to_rgb;
  return Status::OK();
}

Status Append(const std::string& src, const std::string& out, const PackOptions& given, PackResult* result) {
  *result = PackResult();
  Env* env = given.env ? given.env : Env::Default();
  AppendTarget target;
  SHARDPACK_RETURN_IF_ERROR(OpenAppendTarget(env, out, given, /*for_writer=*/false, "an append of " + src, &target));
  // An append killed while it published: --resume finishes it (its shards are complete).
  if (target.publish_only) return FinishInterruptedAppend(env, target, result);
  if (!env->FileExists(src)) return Status::NotFound("source folder " + src + " does not exist");
  const PackOptions& options = target.options;  // as given, and the dataset's where none was
  std::unique_ptr<PackInput> scanned;
  SHARDPACK_RETURN_IF_ERROR(FileTreeInput::Open(env, src, options, &scanned));
  std::vector<std::string> classes;
  std::vector<int32_t> labels;
  SHARDPACK_RETURN_IF_ERROR(CombineClasses(target.dataset, *scanned, out, src, &classes, &labels));
  AppendInput input(std::move(scanned), std::move(classes), std::move(labels));
  if (options.resume && !HoldsAnything(env, target.staging)) {
    // Nothing interrupted to continue. If the dataset's latest generation is this very append
    // (a requeued job that always passes --resume), doing it again would add every sample twice.
    const Format* format = nullptr;
    SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
    const std::string fingerprint = ChecksumHex(Xxh64(PackFingerprint(src, *format, options, input).dump()));
    if (fingerprint == target.dataset.last_append_fingerprint) {
      result->manifest = target.dataset;
      result->already_appended = true;
      return Status::OK();
    }
  }
  return PackAppend(env, &input, src, options, target, /*discard_on_failure=*/false, result);
}

}  // namespace shardpack
