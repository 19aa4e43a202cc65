// verify: the dataset-level checks here, the per-shard checks in the format's verifier.
#include "shardpack/verify.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "formats/common/shard_check.h"
#include "ground/manifest_json.h"
#include "ground/tsan_annotations.h"
#include "ground/worker_threads.h"
#include "ops/read/opened_dataset.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "storage/location.h"

namespace shardpack {
namespace {

// A view's own files: each selection file against its checksum, count and order (ReadSelection).
// Its manifest was checked when it was opened, and its base is the dataset verified around this.
void CheckViewSelections(const OpenedDataset& dataset, VerifyReport* report) {
  const OpenedView& view = *dataset.view;
  report->view_base = view.manifest.base;
  report->view_samples = view.manifest.samples;
  std::vector<uint32_t> positions;
  for (const ViewShard& s : view.manifest.shards) {
    const Status st = ReadSelection(view.env, view.dir, s, dataset.manifest.shards[s.base_shard].samples, &positions);
    if (!st.ok()) report->problems.push_back({s.selection.file, "", st.message()});
  }
}

// Runs check(i) for each of `count` shards on options.threads threads, calling options.on_shard as
// each is done (one at a time). An exception that escapes a check becomes the IOError returned.
Status CheckEachShard(size_t count, const VerifyOptions& options, const std::function<void(size_t)>& check) {
  // ThreadSanitizer tokens (ground/tsan_annotations.h); static, so that a task reaches them without
  // reading the lambda it runs, which is what they order.
  static const char start = 0, finish = 0;
  std::mutex progress_mu;
  uint64_t done = 0;  // shards checked (under progress_mu)
  // Made before `start`, so that what the tasks read of it is ordered before them too.
  const auto task = [&](size_t i) {
    HappensAfter(&start);
    check(i);
    if (options.on_shard) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.on_shard(++done, count);
    }
    HappensBefore(&finish);
  };
  const int threads = WorkerThreads(options.threads);
  HappensBefore(&start);
  try {
    tbb::task_arena arena(threads);
    arena.execute([&] { tbb::parallel_for(size_t(0), count, task); });
  } catch (const std::exception& e) {
    return Status::IOError(std::string("verify failed: ") + e.what());
  }
  HappensAfter(&finish);
  return Status::OK();
}

// What the shards' checks found, into the report.
void AddChecks(std::vector<ShardCheck>& checks, VerifyReport* report) {
  for (ShardCheck& c : checks) {
    report->samples += c.samples;
    report->bytes += c.bytes;
    report->images_decoded += c.images_decoded;
    for (VerifyProblem& p : c.problems) report->problems.push_back(std::move(p));
  }
}

// One shard of another tool, which has no manifest, checksums or index to be checked against: its
// tar structure as the reader indexes it (regular members with safe names, each sample's members
// together, an image in each), then every sample's image read and its header checked (whole,
// ProbeImage), or with --decode decoded.
void VerifyForeignShard(Env* env, const std::string& path, const VerifyOptions& options, ShardCheck* check) {
  std::unique_ptr<DatasetReader> reader;
  const Status opened = DatasetReader::OpenShards({path}, env, &reader, options.remote);
  // The reader's messages name the shard, which the problem names already.
  const auto what = [&path](const Status& s) {
    const std::string& m = s.message();
    return m.rfind(path + ": ", 0) == 0 ? m.substr(path.size() + 2) : m;
  };
  if (!opened.ok()) return check->AddProblem(path, "", what(opened));
  (void)env->GetFileSize(path, &check->bytes);
  ReadSample sample;
  for (uint64_t i = 0; i < reader->size(); ++i) {
    Status s = reader->Read(i, &sample);
    if (s.ok()) {
      ImageInfo info;
      s = ProbeImage(sample.encoded, &info);
    }
    if (s.ok() && options.decode) {
      DecodedImage image;
      s = DecodeImage(sample.encoded, options.max_pixels, &image);
      if (s.ok()) ++check->images_decoded;
    }
    ++check->samples;
    if (!s.ok()) check->AddProblem(path, sample.key, what(s));
  }
}

Status VerifyForeignShards(const std::vector<std::string>& paths, Env* env, const VerifyOptions& options,
                           VerifyReport* report) {
  report->format = DatasetFormat::kWebDataset;
  report->shards = paths.size();
  std::vector<ShardCheck> checks(paths.size());
  SHARDPACK_RETURN_IF_ERROR(
      CheckEachShard(paths.size(), options, [&](size_t i) { VerifyForeignShard(env, paths[i], options, &checks[i]); }));
  AddChecks(checks, report);
  return Status::OK();
}

}  // namespace

Status Verify(const std::string& location, const VerifyOptions& options, VerifyReport* report) {
  *report = VerifyReport();
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  std::vector<std::string> foreign;  // shards of another tool: a shard list, or a folder of them
  Env* default_env = options.env != nullptr ? options.env : Env::Default();
  SHARDPACK_RETURN_IF_ERROR(FindForeignShards(parsed, options.remote, default_env, &foreign));
  if (!foreign.empty()) return VerifyForeignShards(foreign, default_env, options, report);
  OpenedDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(parsed, options.remote, default_env, &dataset));
  Env* env = dataset.env;  // a URL without a cache folder: through memory, a shard at a time per thread
  const std::string& dir = dataset.dir;
  const Manifest& manifest = dataset.manifest;
  const Format* format = dataset.format;
  report->format = manifest.format;
  report->shards = manifest.shards.size();
  // A changed manifest (a class name, an option) could otherwise pass every structural check.
  const Status self = dataset.foreign_index ? Status::OK() : CheckManifestChecksum(env, dir);
  if (!self.ok()) report->problems.push_back({"", "", self.message()});
  if (dataset.view != nullptr) CheckViewSelections(dataset, report);

  std::vector<ShardCheck> checks(manifest.shards.size());
  std::mutex download_mu;
  Status download;  // streamed: the first shard whose download failed (after its retries)
  SHARDPACK_RETURN_IF_ERROR(CheckEachShard(manifest.shards.size(), options, [&](size_t i) {
    // Streamed: the shard downloaded once, held while both of verify's passes read it.
    std::shared_ptr<void> hold;
    const Status held = dataset.streamed == nullptr
                            ? Status::OK()
                            : dataset.streamed->Hold(JoinPath(dir, manifest.shards[i].file), &hold);
    if (held.ok()) {
      format->VerifyShard(env, dir, manifest, i, options, &checks[i]);
    } else {
      std::lock_guard<std::mutex> lock(download_mu);
      if (download.ok()) download = held;
    }
  }));
  SHARDPACK_RETURN_IF_ERROR(download);

  AddChecks(checks, report);
  uint64_t listed = 0, bytes = 0;
  for (const ShardEntry& e : manifest.shards) {
    listed += e.samples;
    bytes += e.bytes;
  }
  if (listed != manifest.samples) {
    report->problems.push_back({"", "",
                                "manifest lists " + std::to_string(manifest.samples) +
                                    " samples but its shards add up to " + std::to_string(listed)});
  }
  if (bytes != manifest.bytes) {
    report->problems.push_back({"", "",
                                "manifest lists " + std::to_string(manifest.bytes) +
                                    " bytes but its shards add up to " + std::to_string(bytes)});
  }
  // A shard file the manifest does not know is either left over or was added by hand; readers that
  // glob for shards would pick it up.
  std::set<std::string> known;
  for (const ShardEntry& e : manifest.shards) known.insert(e.file);
  // Shards an interrupted `shardpack append` moved in before it wrote the manifest that lists them:
  // its staged manifest names them, and `append --resume` publishes them (ops/pack/append.cc).
  std::string staged_text;
  Manifest staged;
  const std::string staged_path = JoinPath(JoinPath(dir, kAppendStagingFolder), kAppendStagedManifest);
  if (env->FileExists(staged_path) && env->ReadFile(staged_path, uint64_t(1) << 30, &staged_text).ok()) {
    const nlohmann::json j = nlohmann::json::parse(staged_text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && ManifestFromJson(j, &staged).ok()) {
      for (const ShardEntry& e : staged.shards) known.insert(e.file);
    }
  }
  std::vector<DirEntry> entries;
  // A dataset read in place from files rather than a folder (a Parquet file, a glob) has no folder
  // of its own to look through.
  if (dataset.foreign_index && !env->ListDir(dir, &entries).ok()) return Status::OK();
  if (!dataset.foreign_index) SHARDPACK_RETURN_IF_ERROR(env->ListDir(dir, &entries));
  std::set<std::string> extra;
  for (const DirEntry& e : entries) {
    if (format->LooksLikeShard(e.name) && !known.count(e.name)) extra.insert(e.name);
  }
  for (const std::string& n : extra) {
    report->problems.push_back({n, "", "shard file is not listed in the manifest"});
  }
  return Status::OK();
}

}  // namespace shardpack
