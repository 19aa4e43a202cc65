#include "shardpack/convert.h"

#include <algorithm>

#include "formats/registry/registry.h"
#include "ops/pack/output_dir.h"
#include "ops/pack/output_env.h"
#include "ops/pack/pack_pipeline.h"
#include "ops/pack/view_input.h"
#include "shardpack/manifest.h"
#include "storage/location.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

// A dataset folder is read by its format; anything else (a shard file, a folder of shards from
// another tool) by the first format that recognises it.
Status OpenInput(Env* env, const std::string& in, const PackOptions& options, std::unique_ptr<PackInput>* input) {
  const uint64_t max_member = options.max_sample_bytes;
  if (env->FileExists(JoinPath(in, kManifestFileName))) {
    Manifest m;
    ViewManifest view;
    bool is_view = false;
    SHARDPACK_RETURN_IF_ERROR(ReadManifestOrView(env, in, /*checked=*/false, &m, &view, &is_view));
    if (is_view) return OpenViewConvertInput(env, in, view, options, input);
    const Format* format = nullptr;
    SHARDPACK_RETURN_IF_ERROR(FindFormatOf(in, m, &format));
    return format->OpenConvertInput(env, in, m, max_member, input);
  }
  // A folder another tool indexed its own way (MDS) is read by its format, as a dataset is.
  Manifest m;
  const Format* format = nullptr;
  const Status indexed = OpenForeignDataset(env, in, &m, &format);
  if (indexed.ok()) return format->OpenConvertInput(env, in, m, max_member, input);
  if (indexed.code() != Status::Code::kNotFound) return indexed;
  return OpenForeignInput(env, in, max_member, input);
}

}  // namespace

Status Convert(const std::string& location, const std::string& out, const PackOptions& options, PackResult* result) {
  *result = PackResult();
  Env* env = options.env ? options.env : Env::Default();
  // Everything that can be checked is checked before a remote input is downloaded.
  Location in_location, out_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &in_location));
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out, &out_location));
  if (!options.list_file.empty() || options.shuffle || options.path_keys) {
    return Status::InvalidArgument(
        "convert keeps the input's order and keys: --list, --shuffle and --key do not apply");
  }
  SHARDPACK_RETURN_IF_ERROR(ValidatePackOptions(options));
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  std::unique_ptr<Env> output_env;  // OUT in an object store
  Env* in_env = env;
  SHARDPACK_RETURN_IF_ERROR(OutputEnvFor(out_location, format, options.remote, options.env, &output_env, &env));
  std::string in;
  SHARDPACK_RETURN_IF_ERROR(ResolveDatasetLocation(in_location, options.remote, in_env, &in));
  std::unique_ptr<PackInput> input;
  SHARDPACK_RETURN_IF_ERROR(OpenInput(in_env, in, options, &input));
  const bool made_out = !env->FileExists(out);
  SHARDPACK_RETURN_IF_ERROR(PrepareOutputDir(env, in, out, options.force, options.resume || options.partitions > 1));
  const Status s = RunPackPipeline(env, input.get(), in, out, options, result);
  if (!s.ok() && made_out) RemoveIfEmpty(env, out);
  return s;
}

}  // namespace shardpack
