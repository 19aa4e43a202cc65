// The wds format's entry in the table of formats (formats/registry/): WebDataset tar shards.
#pragma once

#include "formats/common/format.h"

namespace shardpack {

const Format& WdsFormat();

}  // namespace shardpack
