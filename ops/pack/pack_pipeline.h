// The pack pipeline shared by `pack` and `convert` (see pack_pipeline.cc for how it works).
#pragma once

#include <string>

#include "formats/common/pack_input.h"
#include "ops/pack/output_dir.h"
#include "shardpack/env.h"
#include "shardpack/pack.h"

namespace shardpack {

// InvalidArgument naming the option and the fix.
Status ValidatePackOptions(const PackOptions& options);

// Packs everything `input` yields into out (already prepared); `source` names the input in
// messages. On success out/manifest.json lists every shard; on failure none is written.
Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result);

}  // namespace shardpack
