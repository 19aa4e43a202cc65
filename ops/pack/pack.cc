// pack: the image files of a folder (or a --list) through the pack pipeline.
#include "shardpack/pack.h"

#include "formats/registry/registry.h"
#include "ops/pack/file_tree_input.h"
#include "ops/pack/output_dir.h"
#include "ops/pack/output_env.h"
#include "ops/pack/pack_pipeline.h"
#include "shardpack/convert.h"
#include "storage/location.h"

namespace shardpack {

Status Pack(const std::string& src, const std::string& out, const PackOptions& options, PackResult* result) {
  *result = PackResult();
  Env* env = options.env ? options.env : Env::Default();
  SHARDPACK_RETURN_IF_ERROR(ValidatePackOptions(options));
  // A folder another tool indexed its own way (MDS, Parquet files) holds samples, not image files:
  // packing it is converting it.
  Manifest indexed;
  const Format* indexed_format = nullptr;
  if (OpenForeignDataset(env, src, &indexed, &indexed_format).code() != Status::Code::kNotFound) {
    return Convert(src, out, options, result);
  }
  if (!env->FileExists(src)) return Status::NotFound("source folder " + src + " does not exist");
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormat(options.format, &format));
  Location out_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(out, &out_location));
  std::unique_ptr<Env> output_env;  // OUT in an object store
  SHARDPACK_RETURN_IF_ERROR(OutputEnvFor(out_location, format, options.remote, options.env, &output_env, &env));
  // Parts share OUT: each finds its own files there (Packer), never the others'.
  const bool made_out = !env->FileExists(out);
  SHARDPACK_RETURN_IF_ERROR(PrepareOutputDir(env, src, out, options.force, options.resume || options.partitions > 1));
  std::unique_ptr<PackInput> input;
  Status s = FileTreeInput::Open(env, src, options, &input);
  if (s.ok()) s = RunPackPipeline(env, input.get(), src, out, options, result);
  if (!s.ok() && made_out) RemoveIfEmpty(env, out);
  return s;
}

}  // namespace shardpack
