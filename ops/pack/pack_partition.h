// pack --partition I/N: one part of a pack that several processes (Slurm array tasks, Kubernetes
// indexed jobs) run at once into the same OUT (docs/distributed.md).
//
// The input, as the whole pack would order it (sorted, then shuffled with --seed), is cut into N
// contiguous parts on multiples of samples_per_shard S: with B = ceil(inputs / S) blocks, part I
// takes blocks [I*B/N, (I+1)*B/N), its items from the first block's start, and numbers its shards
// from the first block's number. Keys (the sample index) count from the part's first item. So when
// every shard is cut by count and no input is skipped, part I writes exactly the shards (names,
// bytes, indexes) a one-node pack writes for those items. A part writes only files of its own
// shard numbers, its journal and its part manifest, so parts never touch each other's files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "formats/common/pack_input.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

struct PartPlan {
  uint32_t part = 0, parts = 1;
  uint64_t inputs = 0;                      // items of the whole input
  uint64_t begin = 0, end = 0;              // this part's items
  uint64_t first_shard = 0, end_shard = 0;  // this part's shard numbers
  bool by_count = true;                     // PackOptions::partition_by_count
  std::string shard_prefix;                 // by size: "<prefix>-p00003", this part's shard names
  std::string name;                         // "part-00003-of-00008" ("writer-..." for writer parts)
  // A part written by a SampleWriter (shardpack/writer.h): the input's size is unknown, so the part
  // covers no input range (inputs, begin and end are 0), names its shards "<prefix>-wPPPPP-..." and
  // its index keys "wPPPPP-<index>" (key_prefix), and is written afresh by every run.
  bool writer = false;
  std::string key_prefix;
  std::string manifest_file() const { return name + ".json"; }
  std::string journal_file() const { return name + ".journal.json"; }
};

// --partition as a user gives it: "I/N"; "slurm" (this Slurm array task: SLURM_ARRAY_TASK_ID less
// SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT; or, with `partitions` (--partitions N),
// SLURM_ARRAY_TASK_ID of N, so that a task resubmitted alone with --array=I is still part I); "k8s"
// (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX, of `partitions`). `variable_of` reads the environment (the CLI
// gives getenv; a seam for tests). InvalidArgument naming what is missing or wrong.
Status ResolvePartition(const std::string& spec, uint32_t partitions,
                        const std::function<const char*(const char*)>& variable_of, uint32_t* part, uint32_t* parts);

// InvalidArgument when part >= parts or parts is 0. By count, as above; by size (!by_count), the
// parts split the input evenly and own every shard number under shard_prefix (prefix + "-pPPPPP").
Status PlanPart(uint64_t inputs, uint64_t samples_per_shard, uint32_t part, uint32_t parts, PartPlan* plan,
                bool by_count = true, const std::string& prefix = "shard");

// Part `part` of `parts` written by SampleWriters (see PartPlan::writer). InvalidArgument, as
// PlanPart's, when part >= parts (SampleWriter::Open says it in a writer's words first).
Status PlanWriterPart(uint32_t part, uint32_t parts, const std::string& prefix, PartPlan* plan);

// The items [plan.begin, plan.end) of `input`, which must outlive it. Scan-time skips are part
// 0's to report.
std::unique_ptr<PackInput> NewPartInput(PackInput* input, const PartPlan& plan);

// Whether `name` (a file in OUT) is one of this part's shards or their temporaries: "<prefix>-"
// then the shard's number, within the part's range (by size: "<shard_prefix>-" then any number).
bool IsPartShardFile(const std::string& name, const std::string& prefix, const PartPlan& plan);

// A part manifest: the manifest of the part's shards (ManifestToJson) plus a "part" object with the
// plan and `source` (the whole pack's fingerprint, which every part must share).
Status WritePartManifest(Env* env, const std::string& out, const PartPlan& plan, const Manifest& manifest,
                         const nlohmann::json& source);
// DataLoss naming the file when it is not a part manifest.
Status ReadPartManifest(Env* env, const std::string& path, Manifest* manifest, PartPlan* plan, nlohmann::json* source);

// "part-00003-of-00008.json" (a part manifest, not a journal): true, with the numbers; *writer
// false. "writer-00003-of-00008.json" likewise, *writer true. Any number of digits (at least 5, as
// PartName writes them: "part-00007-of-100000.json").
bool ParsePartManifestName(const std::string& name, uint32_t* part, uint32_t* parts, bool* writer);

// "part-00003-of-00008" ("writer-00003-of-00008" for a writer part): the stem of a part's manifest
// and journal names, numbers of at least 5 digits.
std::string PartName(uint32_t part, uint32_t parts, bool writer = false);

}  // namespace shardpack
