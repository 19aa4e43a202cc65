#include "shardpack/shard_spec.h"

#include <cstdint>

namespace shardpack {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The alternatives one brace body stands for: "a,b,c", or "lo..hi" with lo's width as the padding.
Status BraceAlternatives(const std::string& body, const std::string& spec, std::vector<std::string>* out) {
  out->clear();
  const size_t dots = body.find("..");
  if (dots != std::string::npos && body.find(',') == std::string::npos) {
    const std::string lo = body.substr(0, dots), hi = body.substr(dots + 2);
    if (!AllDigits(lo) || !AllDigits(hi)) {
      return Status::InvalidArgument("shard list '" + spec + "': range {" + body + "} needs a number at each end");
    }
    const int64_t a = std::stoll(lo), b = std::stoll(hi), step = a <= b ? 1 : -1;
    for (int64_t v = a;; v += step) {
      std::string n = std::to_string(v);
      if (n.size() < lo.size()) n.insert(0, lo.size() - n.size(), '0');
      out->push_back(std::move(n));
      if (v == b) break;
    }
    return Status::OK();
  }
  size_t start = 0;
  for (;;) {
    const size_t comma = body.find(',', start);
    out->push_back(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Status::OK();
}

// Expands one "::"-separated part onto *paths; *bytes counts the characters of all paths so far.
Status ExpandOne(const std::string& part, const std::string& spec, std::vector<std::string>* paths, size_t max_paths,
                 uint64_t max_bytes, uint64_t* bytes) {
  std::vector<std::string> prefixes = {""}, alternatives, next;
  size_t pos = 0;
  while (pos < part.size()) {
    const size_t open = part.find('{', pos);
    const size_t close_before = part.find('}', pos);
    if (close_before != std::string::npos && (open == std::string::npos || close_before < open)) {
      return Status::InvalidArgument("shard list '" + spec + "': '}' without a matching '{'");
    }
    const std::string literal = part.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    for (std::string& p : prefixes) p += literal;
    if (open == std::string::npos) break;
    const size_t close = part.find('}', open);
    if (close == std::string::npos)
      return Status::InvalidArgument("shard list '" + spec + "': '{' without a matching '}'");
    const std::string body = part.substr(open + 1, close - open - 1);
    if (body.find('{') != std::string::npos)
      return Status::InvalidArgument("shard list '" + spec + "': nested braces are not supported");
    // Count before expanding, so that a huge range fails fast instead of filling memory.
    const size_t dots = body.find("..");
    if (dots != std::string::npos && body.find(',') == std::string::npos && AllDigits(body.substr(0, dots)) &&
        AllDigits(body.substr(dots + 2))) {
      const int64_t a = std::stoll(body.substr(0, dots)), b = std::stoll(body.substr(dots + 2));
      const uint64_t count = uint64_t(a <= b ? b - a : a - b) + 1;
      if (count > max_paths || prefixes.size() * count + paths->size() > max_paths) {
        return Status::InvalidArgument("shard list '" + spec + "' expands to more than " + std::to_string(max_paths) +
                                       " paths");
      }
    }
    SHARDPACK_RETURN_IF_ERROR(BraceAlternatives(body, spec, &alternatives));
    if (prefixes.size() * alternatives.size() + paths->size() > max_paths) {
      return Status::InvalidArgument("shard list '" + spec + "' expands to more than " + std::to_string(max_paths) +
                                     " paths");
    }
    // Long names times many alternatives: bound the bytes too, not only the count.
    if (*bytes + prefixes.size() * alternatives.size() * (part.size() + 32) > max_bytes) {
      return Status::InvalidArgument("shard list '" + spec + "' expands to more than " +
                                     std::to_string(max_bytes >> 20) + " MiB of paths");
    }
    next.clear();
    for (const std::string& p : prefixes) {
      for (const std::string& a : alternatives) next.push_back(p + a);
    }
    prefixes.swap(next);
    pos = close + 1;
  }
  for (const std::string& p : prefixes) *bytes += p.size() + 32;
  paths->insert(paths->end(), prefixes.begin(), prefixes.end());
  return Status::OK();
}

}  // namespace

Status ExpandShardSpec(const std::string& spec, std::vector<std::string>* paths, size_t max_paths, uint64_t max_bytes) {
  paths->clear();
  uint64_t bytes = 0;
  size_t start = 0;
  for (;;) {
    const size_t sep = spec.find("::", start);
    const std::string part = spec.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
    if (!part.empty()) SHARDPACK_RETURN_IF_ERROR(ExpandOne(part, spec, paths, max_paths, max_bytes, &bytes));
    if (sep == std::string::npos) break;
    start = sep + 2;
  }
  if (paths->empty()) return Status::InvalidArgument("shard list '" + spec + "' names no shards");
  return Status::OK();
}

bool LooksLikeShardSpec(const std::string& path) {
  if (path.find('{') != std::string::npos || path.find("::") != std::string::npos) return true;
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".tar") == 0;
}

}  // namespace shardpack
