// Keyword options from Python, read as the C++ options take them: what pybind's casts do, with
// errors in the caller's words. A value of the wrong type is a TypeError that names the option,
// what it takes and what it got ("threads='2': threads takes an int, not str"), where pybind says
// "Unable to cast Python instance to C++ type"; a size takes what the CLI's size flags take
// (an int of bytes, or "512MB", "2GiB").
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // the casts to std::vector and std::pair: every file that uses these must see them

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "ground/units.h"

namespace shardpack {

namespace py = pybind11;

// What each kind of option takes, as a TypeError says it.
inline constexpr char kCount[] = "a non-negative int";
inline constexpr char kInt[] = "an int";
inline constexpr char kBool[] = "True or False";
inline constexpr char kNumber[] = "a number";
inline constexpr char kPair[] = "a (low, high) pair of numbers";
inline constexpr char kNames[] = "a list of str";
inline constexpr char kText[] = "a str";
inline constexpr char kSides[] = "an int or a (height, width) pair of ints";

// "threads='2'": how a message shows the keyword the caller gave.
inline std::string KeywordShown(const std::string& option, py::handle value) {
  return option + "=" + py::repr(value).cast<std::string>();
}

// A TypeError for a value of another type, a ValueError for an int out of range ("seed=-1").
[[noreturn]] inline void RaiseOptionType(const std::string& option, py::handle value, const std::string& takes) {
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    throw py::value_error(KeywordShown(option, value) + ": " + option + " takes " + takes);
  }
  throw py::type_error(KeywordShown(option, value) + ": " + option + " takes " + takes + ", not " +
                       std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

// The value as T, or RaiseOptionType. A bool is not taken where a number is (True is no count).
template <typename T>
T OptionValue(const std::string& option, py::handle value, const std::string& takes) {
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    if (py::isinstance<py::bool_>(value)) RaiseOptionType(option, value, takes);
  }
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    RaiseOptionType(option, value, takes);
  }
}

// A size in bytes: an int, or a string as the CLI's size flags take it ("512MB", "2GiB", "4096").
inline uint64_t SizeOptionValue(const std::string& option, py::handle value) {
  const std::string takes = "bytes as an int or a size such as \"512MB\" or \"2GiB\"";
  if (py::isinstance<py::str>(value)) {
    uint64_t bytes = 0;
    const Status s = ParseByteSize(value.cast<std::string>(), &bytes);
    if (!s.ok()) throw py::value_error(KeywordShown(option, value) + ": " + s.message());
    return bytes;
  }
  return OptionValue<uint64_t>(option, value, takes);
}

// A message of the library in the words of the Python package's keywords: the library names the
// CLI's flags (and the C++ API's fields), which a Python caller does not have ("pass --force" is
// "pass force=True" to shardpack.Writer; "--shuffle-buffer N" is "shuffle_buffer=N" to Loader).
inline std::string InPythonWords(std::string message) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"--force", "force=True"},
      {"--resume", "resume=True"},
      {"--strict", "strict=True"},
      {"--lossless-as-jpeg", "lossless_as_jpeg=True"},
      {"--max-side ", "max_side="},
      {"--max-side", "max_side"},
      {"--layout", "layout="},
      {"--list", "list="},
      {"--cache-dir DIR", "cache_dir=DIR"},
      {"--cache-limit", "cache_limit"},
      {"--shuffle-buffer N", "shuffle_buffer=N"},
      {"(give label or class_name)", "(give label=)"},
      {"(--key)", "(keys=)"},  // pack's --key is the keyword keys=
  };
  for (const auto& [cli, python] : kWords) {
    for (size_t at = message.find(cli); at != std::string::npos; at = message.find(cli, at + std::strlen(python))) {
      message.replace(at, std::strlen(cli), python);
    }
  }
  // Any other flag named alone in parentheses, "(--samples-per-shard)", is its keyword with
  // underscores, "(samples_per_shard=)": the Python options mirror the CLI's flags.
  for (size_t at = message.find("(--"); at != std::string::npos; at = message.find("(--", at + 1)) {
    size_t end = at + 3;
    while (end < message.size() && (std::islower(static_cast<unsigned char>(message[end])) ||
                                    std::isdigit(static_cast<unsigned char>(message[end])) || message[end] == '-')) {
      ++end;
    }
    if (end == at + 3 || end >= message.size() || message[end] != ')') continue;
    std::string keyword = message.substr(at + 3, end - at - 3);
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    message.replace(at, end - at + 1, "(" + keyword + "=)");
  }
  return message;
}

}  // namespace shardpack
