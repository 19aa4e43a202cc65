#include "ground/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace shardpack {

Status ParseByteSize(const std::string& text, uint64_t* bytes) {
  const Status bad = Status::InvalidArgument(
      "'" + text + "' is not a byte size; write a number with an optional unit, e.g. 512MB or 1GiB");
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return bad;
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(text.substr(0, i), &used);
    if (used != i) return bad;
  } catch (...) {
    return bad;
  }
  std::string unit;
  for (size_t j = i; j < text.size(); ++j) {
    if (text[j] != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
  }
  double scale = 0;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "kb")
    scale = 1e3;
  else if (unit == "m" || unit == "mb")
    scale = 1e6;
  else if (unit == "g" || unit == "gb")
    scale = 1e9;
  else if (unit == "t" || unit == "tb")
    scale = 1e12;
  else if (unit == "kib")
    scale = 1024.0;
  else if (unit == "mib")
    scale = 1024.0 * 1024;
  else if (unit == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return bad;
  double value = std::round(number * scale);
  if (!(value >= 1) || value > 9.2e18) return bad;
  *bytes = static_cast<uint64_t>(value);
  return Status::OK();
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string FormatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace shardpack
