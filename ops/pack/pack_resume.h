// pack --resume: what identifies a pack (its options as the manifest records them, and the
// fingerprint a journal carries), and where a pack into OUT continues after an earlier run.
//
// A run that stopped leaves its complete shards and OUT/pack-journal.json (ops/pack/pack_journal.h). A
// resumed run must be the same pack: same source, options, input count and classes (the
// fingerprint); it then keeps those shards and skips the inputs they hold. A finished dataset of
// the same pack means there is nothing to do.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "formats/common/format.h"
#include "formats/common/pack_input.h"
#include "ops/pack/output_dir.h"
#include "ops/pack/pack_journal.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"

namespace shardpack {

// The options that shape the output, as the manifest records them.
nlohmann::json PackOptionsJson(const Format& format, const PackOptions& options);

// What a resumed run must share with the run it continues.
nlohmann::json PackFingerprint(const std::string& source, const Format& format, const PackOptions& options,
                               const PackInput& input);

struct ResumePoint {
  bool complete = false;  // OUT already holds the finished dataset of this pack (in `finished`)
  Manifest finished;
  bool resumed = false;  // an interrupted run's shards are kept: continue after `journal`
  PackJournal journal;
};

// The files that hold a pack's state in OUT. A whole pack: manifest.json, pack-journal.json, and
// every file a pack writes is its own. One part of a partitioned pack: its part manifest, its
// journal, its own shards (ops/pack/pack_partition.h).
struct PackStateFiles {
  std::string finished = kManifestFileName;  // written last, when the pack is complete
  std::string journal = kPackJournalFileName;
  // Reads `finished` (which exists).
  std::function<Status(Manifest* manifest)> read_finished;
  OwnsOutputFile owns = IsOurOutputFile;
};
PackStateFiles WholePackFiles(Env* env, const std::string& out);

// Looks at OUT for pack `wanted` (its manifest so far: format, options, classes) with `fingerprint`.
// Neither a finished manifest nor a journal: removes what an earlier run left (its own files only)
// and returns a point that starts afresh. InvalidArgument when OUT holds another pack, DataLoss
// when a shard the journal lists is gone or has another size.
Status FindResumePoint(Env* env, const std::string& out, const PackStateFiles& files, const Manifest& wanted,
                       const nlohmann::json& fingerprint, ResumePoint* point);

}  // namespace shardpack
