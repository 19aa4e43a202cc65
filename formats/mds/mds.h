// MosaicML Streaming's MDS datasets and LitData's optimized ones in the table of formats
// (formats/registry/): read in place and converted, never written (docs/formats/mds.md,
// docs/formats/litdata.md). A folder is one when it has an index.json of either and no
// manifest.json: OpenMdsManifest makes the manifest the operations take it by.
#pragma once

#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"

namespace shardpack {

const Format& MdsFormat();
// LitData's optimized datasets, read by the same code (litdata_index.h; docs/formats/litdata.md).
const Format& LitDataFormat();

// The manifest of the MDS or LitData dataset in `dir` (MdsManifest) and its format. NotFound when
// `dir` holds neither index.
Status OpenMdsManifest(Env* env, const std::string& dir, Manifest* manifest, const Format** format);

}  // namespace shardpack
