#include "ground/sample_keys.h"

#include <cstdio>
#include <unordered_set>

#include "ground/checksum.h"

namespace shardpack {

std::string IndexKey(uint64_t index) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%09llu", static_cast<unsigned long long>(index));
  return buf;
}

std::string SanitizedPathKey(const std::string& relpath) {
  std::string stem = relpath;
  size_t slash = stem.find_last_of('/');
  size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) stem.resize(dot);
  std::string key;
  for (char c : stem) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    key += keep ? c : '_';
  }
  if (key.empty()) key = "_";
  // Room is left for a "_<n>" uniqueness suffix added later.
  constexpr size_t kLimit = kMaxKeyLength - 8;
  if (key.size() > kLimit) {
    key = key.substr(0, kLimit - 17) + "_" + ChecksumHex(Xxh64(relpath));
  }
  return key;
}

std::vector<std::string> UniquePathKeys(const std::vector<std::string>& relpaths) {
  std::vector<std::string> keys;
  keys.reserve(relpaths.size());
  std::unordered_set<std::string> used;
  used.reserve(relpaths.size() * 2);
  for (const std::string& p : relpaths) {
    std::string base = SanitizedPathKey(p);
    std::string key = base;
    for (uint64_t n = 2; !used.insert(key).second; ++n) key = base + "_" + std::to_string(n);
    keys.push_back(std::move(key));
  }
  return keys;
}

std::string FieldKind(const std::string& name) {
  const size_t dot = name.rfind('.');
  std::string kind = dot == std::string::npos ? name : name.substr(dot + 1);
  for (char& c : kind) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return kind;
}

bool IsImageFieldKind(const std::string& kind) {
  return kind == "jpg" || kind == "jpeg" || kind == "png" || kind == "webp" || kind == "bmp";
}

std::string FieldNameProblem(const std::string& name) {
  if (name.empty() || name.size() > kMaxFieldNameLength) {
    return "field name '" + name + "' is not 1 to " + std::to_string(kMaxFieldNameLength) + " bytes long";
  }
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return "field name '" + name + "' has a character outside A-Z a-z 0-9 _ - .";
  }
  if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string::npos) {
    return "field name '" + name + "' starts or ends with '.' or has '..'";
  }
  return "";
}

}  // namespace shardpack
