// The pack pipeline shared by `pack` and `convert` (see pack_pipeline.cc for how it works).
#pragma once

#include <string>

#include "formats/common/pack_input.h"
#include "ops/pack/output_dir.h"
#include "ops/pack/pack_partition.h"
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

// Packs everything `input` yields into `out` as the part `plan` says: its shard numbers, keys
// counted from plan.begin, its journal and its part manifest instead of manifest.json. What append
// uses, in its staging folder (ops/pack/append.cc).
Status RunPackPart(Env* env, PackInput* input, const std::string& source, const std::string& out,
                   const PackOptions& options, const PartPlan& plan, PackResult* result);

}  // namespace shardpack
