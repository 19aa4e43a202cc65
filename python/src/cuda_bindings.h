// The CUDA feed in Python (python/shardpack/loader.py, device="cuda"): _shardpack.CudaFeed and the
// batches it hands to torch through DLPack, _shardpack.DeviceBatch; has_cuda says whether the module
// was built with them (cuda_bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace shardpack {

void BindCuda(pybind11::module_& m);

}  // namespace shardpack
