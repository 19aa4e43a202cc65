#include "shardpack/convert.h"

#include <algorithm>

#include "formats/lmdb/lmdb_input.h"
#include "formats/wds/wds_input.h"
#include "lib/pack_pipeline.h"
#include "shardpack/manifest.h"

namespace shardpack {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsShardName(const std::string& name) {
  return name[0] != '.' && (EndsWith(name, ".tar") || EndsWith(name, ".tar.gz") || EndsWith(name, ".tgz"));
}

Status OpenInput(Env* env, const std::string& in, const PackOptions& options, std::unique_ptr<PackInput>* input,
                 std::string* in_dir) {
  const uint64_t max_member = options.max_sample_bytes;
  std::vector<DirEntry> entries;
  if (!env->ListDir(in, &entries).ok()) {  // a single shard file
    if (!env->FileExists(in)) return Status::NotFound("input " + in + " does not exist");
    *in_dir = in;  // nothing can lie inside a file
    *input =
        std::make_unique<WdsInput>(env, std::vector<std::string>{in}, std::vector<std::string>{}, 0, false, max_member);
    return Status::OK();
  }
  *in_dir = in;
  if (env->FileExists(JoinPath(in, kManifestFileName))) {
    Manifest m;
    SHARDPACK_RETURN_IF_ERROR(ReadManifest(env, in, &m));
    if (m.format == "lmdb") return LmdbInput::Open(in, m.classes, m.samples, input);
    if (m.format != "wds") {
      return Status::Unsupported(
          in + " is a '" + m.format +
          "' dataset, which holds decoded pixels only; convert the wds or lmdb dataset it was made from");
    }
    std::vector<std::string> shards;
    for (const ShardEntry& e : m.shards) shards.push_back(JoinPath(in, e.file));
    *input = std::make_unique<WdsInput>(env, shards, m.classes, m.samples, true, max_member);
    return Status::OK();
  }
  std::vector<std::string> shards;
  for (const DirEntry& e : entries) {
    if (e.type == DirEntry::Type::kFile && IsShardName(e.name)) shards.push_back(JoinPath(in, e.name));
  }
  std::sort(shards.begin(), shards.end());
  if (shards.empty()) {
    return Status::NotFound(in + " holds neither a manifest.json nor .tar/.tar.gz shards; nothing to convert");
  }
  *input = std::make_unique<WdsInput>(env, shards, std::vector<std::string>{}, 0, false, max_member);
  return Status::OK();
}

}  // namespace

Status Convert(const std::string& in, const std::string& out, const PackOptions& options, PackResult* result) {
  *result = PackResult();
  Env* env = options.env ? options.env : Env::Default();
  if (!options.list_file.empty() || options.shuffle || options.path_keys) {
    return Status::InvalidArgument(
        "convert keeps the input's order and keys: --list, --shuffle and --key do not apply");
  }
  SHARDPACK_RETURN_IF_ERROR(ValidatePackOptions(options));
  std::unique_ptr<PackInput> input;
  std::string in_dir;
  SHARDPACK_RETURN_IF_ERROR(OpenInput(env, in, options, &input, &in_dir));
  SHARDPACK_RETURN_IF_ERROR(PrepareOutputDir(env, in_dir, out, options.force, options.resume));
  return RunPackPipeline(env, input.get(), in, out, options, result);
}

}  // namespace shardpack
