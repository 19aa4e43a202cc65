// The per-sample metadata the formats that keep one store with each sample: WebDataset's ".json"
// member and the LMDB record header (docs/formats/wds.md, lmdb.md).
#pragma once

#include <nlohmann/json.hpp>

#include "formats/common/dataset_writer.h"

namespace shardpack {

// {"path", "width", "height", "format", "class" (null when unlabelled)} and, for a converted
// sample, "source" (its metadata in the dataset it came from). A format adds its own fields.
nlohmann::json SampleMetadata(const Sample& sample);

}  // namespace shardpack
