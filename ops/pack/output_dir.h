// The output folder of pack and convert: what is prepared before a run and cleared on the way.
// Only files a pack writes are ever removed (shards, side files, manifest, journal, temporaries,
// LMDB's two files); anything else the user keeps in OUT is left alone.
#pragma once

#include <functional>
#include <string>

#include "shardpack/env.h"

namespace shardpack {

// OUT must be empty, or hold a dataset the user agreed to replace (force). The old manifest goes
// first, so that a pack that dies later never leaves a manifest pointing at a mix of old and new
// shards. Refuses an OUT inside `src`, and an OUT holding an interrupted pack unless resume or
// force. With resume, OUT is only created: the pipeline decides what of its contents to keep.
Status PrepareOutputDir(Env* env, const std::string& src, const std::string& out, bool force, bool resume);

// Removes OUT when it is an empty folder: a failed run that made it leaves nothing that looks like
// a start (best effort: an Env without folders keeps it).
void RemoveIfEmpty(Env* env, const std::string& out);

// Which files of OUT a run may remove: a whole pack, every file a pack writes (IsOurOutputFile);
// one part of a partitioned pack, only its own (ops/pack/pack_partition.h).
using OwnsOutputFile = std::function<bool(const std::string& name)>;
bool IsOurOutputFile(const std::string& name);

// Removes the files a pack writes (those `owns` names), the manifest first, after what unfinished
// writes of those names left outside them (Env::FreeUnfinishedWrites: multipart uploads).
Status RemoveOurOutputFiles(Env* env, const std::string& out, const OwnsOutputFile& owns = IsOurOutputFile);

// Removes the temporary files (*.tmp) a killed pack left, the shard it was writing, and frees its
// unfinished uploads (Env::FreeUnfinishedWrites), of those `owns` names.
Status RemoveTemporaryFiles(Env* env, const std::string& out, const OwnsOutputFile& owns = IsOurOutputFile);

}  // namespace shardpack
