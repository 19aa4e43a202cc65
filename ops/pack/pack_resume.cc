#include "ops/pack/pack_resume.h"

#include <climits>
#include <cstdlib>

#include "ops/pack/output_dir.h"

namespace shardpack {

nlohmann::json PackOptionsJson(const Format& format, const PackOptions& o) {
  nlohmann::json j = {{"prefix", o.prefix},
                      {"shard_size", o.shard_size_bytes},
                      {"samples_per_shard", o.samples_per_shard},
                      {"shuffle", o.shuffle},
                      {"seed", o.seed},
                      {"keys", o.path_keys ? "path" : "index"},
                      {"check", o.decode_check ? "decode" : "header"},
                      {"max_sample_bytes", o.max_sample_bytes},
                      {"max_pixels", o.max_pixels}};
  // Only when not the default, so that the manifests of packs without it stay as they were.
  if (o.layout == SourceLayout::kSamples) j["layout"] = "samples";
  if (o.lossless_as_jpeg) j["lossless_as_jpeg"] = {{"jpeg_quality", o.jpeg_quality}, {"background", "white"}};
  if (o.max_side > 0) {
    j["max_side"] = {{"side", o.max_side},
                     {"of", o.max_side_of_short ? "short" : "long"},
                     {"filter", "area"},
                     {"jpeg_quality", o.jpeg_quality}};
  }
  format.AddManifestOptions(o, &j);
  return j;
}

nlohmann::json PackFingerprint(const std::string& source, const Format& format, const PackOptions& options,
                               const PackInput& input) {
  char real[PATH_MAX];
  const std::string resolved = ::realpath(source.c_str(), real) ? std::string(real) : source;
  return {{"source", resolved},
          {"list_file", options.list_file},
          {"format", std::string(format.name())},
          {"options", PackOptionsJson(format, options)},
          {"inputs", input.expected() + input.initial_skips().size()},
          {"classes", input.class_names()},
          {"shardpack_version", SHARDPACK_VERSION}};
}

PackStateFiles WholePackFiles(Env* env, const std::string& out) {
  PackStateFiles files;
  files.read_finished = [env, out](Manifest* m) { return ReadManifest(env, out, m); };
  return files;
}

Status FindResumePoint(Env* env, const std::string& out, const PackStateFiles& files, const Manifest& wanted,
                       const nlohmann::json& fingerprint, ResumePoint* point) {
  *point = ResumePoint();
  const std::string journal_path = JoinPath(out, files.journal);
  if (env->FileExists(JoinPath(out, files.finished))) {
    SHARDPACK_RETURN_IF_ERROR(files.read_finished(&point->finished));
    const Manifest& existing = point->finished;
    if (existing.format != wanted.format || existing.options_json != wanted.options_json ||
        existing.classes != wanted.classes) {
      return Status::InvalidArgument("output folder " + out +
                                     " holds a finished dataset packed from another source or with other options; "
                                     "use --force to replace it");
    }
    // The manifest is in place, so the dataset is complete: a journal left beside it is stale.
    if (env->FileExists(journal_path)) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(journal_path));
    point->complete = true;
    return Status::OK();
  }
  Status s = ReadPackJournal(env, out, &point->journal, files.journal);
  if (s.code() == Status::Code::kNotFound) {
    // No shard was completed: start afresh, clearing what the earlier run left (its files only).
    point->journal = PackJournal();
    return RemoveOurOutputFiles(env, out, files.owns);
  }
  SHARDPACK_RETURN_IF_ERROR(s);
  if (point->journal.fingerprint != fingerprint) {
    return Status::InvalidArgument(journal_path +
                                   ": the interrupted pack in this folder had another source or other options; "
                                   "rerun it with the same ones, or use --force to start over");
  }
  for (const ShardEntry& shard : point->journal.progress.shards) {
    const std::string path = JoinPath(out, shard.file);
    uint64_t size = 0;
    if (!env->GetFileSize(path, &size).ok() || size != shard.bytes) {
      return Status::DataLoss(path + " is missing or not the size the journal records (" + std::to_string(shard.bytes) +
                              " bytes); use --force to start over");
    }
    // Where the storage keeps a checksum (an object store), it must be the journal's too.
    std::string stored;
    const Status s = env->GetStoredXxh64(path, &stored);
    if (s.code() != Status::Code::kUnsupported) SHARDPACK_RETURN_IF_ERROR(s);
    if (s.ok() && stored != shard.xxh64) {
      return Status::DataLoss(path + " has XXH64 " + stored + ", not " + shard.xxh64 +
                              " as the journal records; use --force to start over");
    }
  }
  SHARDPACK_RETURN_IF_ERROR(RemoveTemporaryFiles(env, out, files.owns));
  point->resumed = true;
  return Status::OK();
}

}  // namespace shardpack
