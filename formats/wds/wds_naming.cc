#include "formats/wds/wds_naming.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace shardpack {

bool SplitWdsMemberName(const std::string& name, std::string* key, std::string* ext) {
  size_t slash = name.find_last_of('/');
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = name.find('.', base);
  if (dot == std::string::npos || dot == base) return false;
  *key = name.substr(0, dot);
  *ext = name.substr(dot + 1);
  return true;
}

std::string LowerExtension(std::string ext) {
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

ImageFormat WdsImageFormat(const std::string& ext) { return ImageFormatFromExtension(LowerExtension(ext)); }

bool IsUnsafeMemberName(const std::string& n) {
  if (n.empty() || n[0] == '/') return true;
  return n == ".." || n.rfind("../", 0) == 0 || n.find("/../") != std::string::npos ||
         (n.size() >= 3 && n.compare(n.size() - 3, 3, "/..") == 0);
}

bool ParseClsField(const std::string& data, int32_t* label) {
  const std::string s = [&] {
    size_t b = data.find_first_not_of(" \t\r\n"), e = data.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? std::string() : data.substr(b, e - b + 1);
  }();
  if (s.empty() || s.size() > 11) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX) return false;
  *label = static_cast<int32_t>(v);
  return true;
}

}  // namespace shardpack
