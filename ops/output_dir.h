// The output folder of pack and convert: what is prepared before a run and cleared on the way.
// Only files a pack writes are ever removed (shards, side files, manifest, journal, temporaries,
// LMDB's two files); anything else the user keeps in OUT is left alone.
#pragma once

#include <string>

#include "shardpack/env.h"

namespace shardpack {

// OUT must be empty, or hold a dataset the user agreed to replace (force). The old manifest goes
// first, so that a pack that dies later never leaves a manifest pointing at a mix of old and new
// shards. Refuses an OUT inside `src`, and an OUT holding an interrupted pack unless resume or
// force. With resume, OUT is only created: the pipeline decides what of its contents to keep.
Status PrepareOutputDir(Env* env, const std::string& src, const std::string& out, bool force, bool resume);

// Removes the files a pack writes, the manifest first.
Status RemoveOurOutputFiles(Env* env, const std::string& out);

// Removes the temporary files (*.tmp) a killed pack left: the shard it was writing.
Status RemoveTemporaryFiles(Env* env, const std::string& out);

}  // namespace shardpack
