// Numpy arrays made by the module: always with their strides given, in bytes.
//
// Why: pybind11 2.10 (Debian 12's) fills in strides that are left out from the dtype's item size,
// which it reads from numpy's PyArray_Descr struct at its numpy 1.x offset. Numpy 2 moved that
// field, so under numpy 2 such an array gets strides of 0 and every element reads as the first:
// a CPU batch was one pixel repeated and its labels one label, silently (found on the H200 machine,
// whose PyTorch brings numpy 2). Given strides pass straight to numpy's own constructor.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace shardpack_python {

// Row-major (C order) strides in bytes of an array of T with this shape.
template <typename T>
std::vector<pybind11::ssize_t> RowMajorStrides(const std::vector<pybind11::ssize_t>& shape) {
  std::vector<pybind11::ssize_t> strides(shape.size());
  pybind11::ssize_t stride = sizeof(T);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

// An array over `data` that keeps `base` alive (no copy); with no base, a copy of `data`; with
// no data either, a new uninitialised array.
template <typename T>
pybind11::array_t<T> RowMajorArray(std::vector<pybind11::ssize_t> shape, const T* data = nullptr,
                                   pybind11::handle base = pybind11::handle()) {
  std::vector<pybind11::ssize_t> strides = RowMajorStrides<T>(shape);
  return pybind11::array_t<T>(std::move(shape), std::move(strides), data, base);
}

// A new array of To holding `values` converted (labels int32 -> int64, ...), filled in place; shape
// defaults to one dimension.
template <typename To, typename From>
pybind11::array_t<To> ConvertedArray(const std::vector<From>& values, std::vector<pybind11::ssize_t> shape = {}) {
  if (shape.empty()) shape = {pybind11::ssize_t(values.size())};
  pybind11::array_t<To> out = RowMajorArray<To>(std::move(shape));
  To* data = out.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) data[i] = To(values[i]);
  return out;
}

}  // namespace shardpack_python
