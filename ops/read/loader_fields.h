// What a loader's options ask of every sample (a mask field, required fields) against what a
// dataset's manifest says its samples hold: checked when the loader opens, for one dataset and for
// each source of a mixture alike, so that a misspelt mask="seg.png" is an error at once rather than
// an epoch of samples skipped one by one.
#pragma once

#include <string>

#include "shardpack/loader.h"
#include "shardpack/shard_table.h"

namespace shardpack {

// "" when `manifest` can hold what `options` asks; else what it lacks, as the end of a sentence
// ("has no mask field 'seg.png' (its samples' fields: txt), which the loader's mask option asks of
// every sample"). A manifest shardpack did not write (a shard list of another tool's) counts its
// fields nowhere, so nothing is refused for it.
std::string FieldsMissingFor(const CompactManifest& manifest, const LoaderOptions& options);

}  // namespace shardpack
