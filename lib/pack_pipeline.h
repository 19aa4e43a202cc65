// The pack pipeline shared by `pack` and `convert` (see pack_pipeline.cc for how it works).
#pragma once

#include <string>

#include "lib/pack_input.h"
#include "shardpack/env.h"
#include "shardpack/pack.h"

namespace shardpack {

// InvalidArgument naming the option and the fix.
Status ValidatePackOptions(const PackOptions& options);

// OUT must be empty, or hold a dataset the user agreed to replace (force). The old manifest goes
// first, so that a pack that dies later never leaves a manifest pointing at a mix of old and new
// shards. Refuses an OUT inside `src`. With resume, OUT is only created: the pipeline decides what
// of its contents to keep.
Status PrepareOutputDir(Env* env, const std::string& src, const std::string& out, bool force, bool resume);

// Packs everything `input` yields into out (already prepared); `source` names the input in
// messages. On success out/manifest.json lists every shard; on failure none is written.
Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result);

}  // namespace shardpack
