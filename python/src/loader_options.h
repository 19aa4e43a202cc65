// The loader's options from shardpack.Loader's keywords (python/shardpack/loader.py), in one place
// for the CPU loader and the CUDA feed, and a mixture from its `sources`.
#pragma once

#include <pybind11/pybind11.h>

#include "shardpack/loader.h"

namespace shardpack {

// A keyword the table does not know is a TypeError naming it; a bad value a TypeError or
// ValueError naming the keyword. Reads the environment's settings (SHARDPACK_CACHE, SHARDPACK_HTTP_*,
// AWS_*) for what the keywords leave unset.
LoaderOptions LoaderOptionsFrom(const pybind11::kwargs& kwargs);

// {"sources": [{"location", "weight", "samples", "passes"}], "epoch_size", "per_source_batches",
// "shared_classes"}, as python/shardpack/loader.py checks and completes it.
Mixture MixtureFrom(const pybind11::dict& d);

}  // namespace shardpack
