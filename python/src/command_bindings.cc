// _shardpack.cli: command_bindings.h. The command runs without the GIL.
#include "command_bindings.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "tools/command_line.h"

namespace py = pybind11;

namespace shardpack {
namespace {

int RunCli(const std::vector<std::string>& args) {
  std::vector<std::string> storage = {"shardpack"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  py::gil_scoped_release nogil;
  return RunCommandLine(int(storage.size()), argv.data());
}

}  // namespace

void BindCommandLine(py::module_& m) {
  m.def("cli", &RunCli, py::arg("args"),
        "Runs the shardpack command line with these arguments; returns its exit status");
}

}  // namespace shardpack
