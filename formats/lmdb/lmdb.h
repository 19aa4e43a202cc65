// The lmdb format's entry in the table of formats (formats/registry/): one LMDB environment.
#pragma once

#include "formats/common/format.h"

namespace shardpack {

const Format& LmdbFormat();

}  // namespace shardpack
