// _shardpack.cli: the command line inside the module, for the `shardpack` console script and for what
// the package runs as commands (views: split, subset; report; verify, stat, ...).
#pragma once

#include <pybind11/pybind11.h>

namespace shardpack {

void BindCommandLine(pybind11::module_& m);

}  // namespace shardpack
