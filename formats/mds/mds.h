// MosaicML Streaming's MDS datasets in the table of formats (formats/registry/): read in place and
// converted, never written (docs/formats/mds.md). A folder is one when it has an index.json of
// MDS's and no manifest.json: OpenMdsManifest makes the manifest the operations take it by.
#pragma once

#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

const Format& MdsFormat();

// The manifest of the MDS dataset in `dir` (MdsManifest). NotFound when `dir` holds no MDS index.
Status OpenMdsManifest(Env* env, const std::string& dir, Manifest* manifest);

}  // namespace shardpack
