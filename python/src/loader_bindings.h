// shardpack.Loader's native half (python/shardpack/loader.py): _shardpack.Loader and the batches it
// lends, _shardpack.BatchLease (loader_bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace shardpack {

void BindLoader(pybind11::module_& m);

}  // namespace shardpack
