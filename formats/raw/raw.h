// The raw format's entry in the table of formats (formats/registry/): pre-decoded pixels in .npy shards.
#pragma once

#include "formats/common/format.h"

namespace shardpack {

const Format& RawFormat();

}  // namespace shardpack
