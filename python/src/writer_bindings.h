// shardpack.Writer and shardpack.pack(): the writing half of the Python module (writer_bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace shardpack {

void BindWriting(pybind11::module_& m);

}  // namespace shardpack
