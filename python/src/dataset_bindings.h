// shardpack.open()'s native half (python/shardpack/dataset.py): _shardpack.Dataset, random access to
// any dataset's samples as WebDataset-style dicts (dataset_bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace shardpack {

void BindDataset(pybind11::module_& m);

}  // namespace shardpack
