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
// writer_parts > 1: a SampleWriter's part writer_part of writer_parts (PlanWriterPart), with its
// part manifest instead (options.partitions must be 1).
Status RunPackPipeline(Env* env, PackInput* input, const std::string& source, const std::string& out,
                       const PackOptions& options, PackResult* result, uint32_t writer_part = 0,
                       uint32_t writer_parts = 0);

}  // namespace shardpack
