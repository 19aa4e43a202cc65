// The journal of a pack in progress, OUT/pack-journal.json: what `pack --resume` needs to keep the
// shards a killed or interrupted run completed and redo only the rest.
//
// Invariants: the journal is rewritten (atomically, and synced unless --no-sync) each time a shard
// is published, after that shard's files are in place, so every shard it lists is complete. It
// never makes a dataset look complete: only manifest.json does, and the journal is removed once the
// manifest is written. It is a manifest in progress (same JSON fields: the published shards, the
// samples in them, the skips so far) plus a "resume" object: where in the input to continue and the
// fingerprint of the run (source, format, options, input size) that a resumed run must match.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

struct PackJournal {
  Manifest progress;            // shards published so far, their samples, the skips so far
  uint64_t input_position = 0;  // input items accounted for: the samples in `progress` and the skips
  nlohmann::json fingerprint;   // must equal the resumed run's
};

// `name`: the journal's file name in OUT (one part of a partitioned pack has its own).
Status WritePackJournal(Env* env, const std::string& out, const PackJournal& journal, bool sync,
                        const std::string& name = kPackJournalFileName);
// NotFound when there is none; DataLoss naming the file when it cannot be parsed.
Status ReadPackJournal(Env* env, const std::string& out, PackJournal* journal,
                       const std::string& name = kPackJournalFileName);

}  // namespace shardpack
