// _shardpack: the Python binding of the C++ library (python/shardpack/ is the package users import).
// A file per area binds it: the loader (loader_bindings.cc), random access to a dataset
// (dataset_bindings.cc), writing and packing (writer_bindings.cc), the command line that views and
// reports run through (command_bindings.cc), and the CUDA feed (cuda_bindings.cc). What they share:
// errors as Python exceptions (python_errors.h), keyword values (option_values.h), numpy arrays
// (numpy_arrays.h).
#include <pybind11/pybind11.h>

#include "command_bindings.h"
#include "cuda_bindings.h"
#include "dataset_bindings.h"
#include "loader_bindings.h"
#include "shardpack/sampler.h"
#include "writer_bindings.h"

PYBIND11_MODULE(_shardpack, m) {
  using namespace shardpack;
  m.doc() = "shardpack's C++ library; use the shardpack package (shardpack.Loader, shardpack.open).";
  m.attr("__version__") = SHARDPACK_VERSION;
  m.attr("ORDER_VERSION") = shardpack::kOrderVersion;  // shardpack/sampler.h: resume states record it
  BindWriting(m);
  BindLoader(m);
  BindDataset(m);
  BindCommandLine(m);
  BindCuda(m);
}
