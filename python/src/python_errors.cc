// Raise(): python_errors.h.
#include "python_errors.h"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "option_values.h"

namespace py = pybind11;

namespace shardpack {

void Raise(const Status& s) {
  if (s.ok()) return;
  const std::string message = InPythonWords(s.message());  // in the keywords of this interface
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      throw py::value_error(message);
    case Status::Code::kNotFound: {
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    }
    case Status::Code::kIOError: {
      PyErr_SetString(PyExc_OSError, message.c_str());
      throw py::error_already_set();
    }
    default:
      throw std::runtime_error(InPythonWords(s.ToString()));
  }
}

}  // namespace shardpack
