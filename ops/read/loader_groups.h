// The loader's SampleGroups (each sample's bucket or patch grid) for buckets and token budgets:
// read from the datasets' sample tables, or mapped from the node's table in the cache folder when
// the loader has one (ops/read/node_group_table.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/read/grouped_batch_sampler.h"
#include "ops/read/shown_sizes.h"
#include "shardpack/loader.h"
#include "shardpack/status.h"

namespace shardpack {

// Each sample's group over `locations` (a mixture's sources, source after source); *groups null
// with neither buckets nor a budget. With options.remote.cache_dir the table is the node's: made by
// the first process to open, mapped by the rest (a dataset whose manifest has no checksum is read
// as without a cache folder). *datasets: the locations as opened for their sizes (none with neither),
// for a caller that makes its reader over them (OpenLocalDatasetReader).
Status LoaderGroups(const std::vector<std::string>& locations, const LoaderOptions& options,
                    std::shared_ptr<const SampleGroups>* groups, std::vector<SizedDataset>* datasets);

}  // namespace shardpack
