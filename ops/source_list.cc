#include "ops/source_list.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace shardpack {
namespace {

bool ParseLabel(const std::string& s, int32_t* label) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *label);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty() && *label >= -1;
}

bool UnsafePath(const std::string& p) {
  if (p.empty() || p[0] == '/') return true;
  size_t start = 0;
  for (;;) {
    size_t slash = p.find('/', start);
    if (p.compare(start, slash == std::string::npos ? std::string::npos : slash - start, "..") == 0) return true;
    if (slash == std::string::npos) return false;
    start = slash + 1;
  }
}

}  // namespace

Status ReadSourceList(Env* env, const std::string& list_path, SourceTree* tree) {
  *tree = SourceTree();
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(list_path, uint64_t(1) << 34, &text));
  std::vector<std::pair<std::string, std::string>> entries;  // path, label text
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    const auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(list_path + " line " + std::to_string(line_no) + ": " + why);
    };
    if (tab == std::string::npos || line.find('\t', tab + 1) != std::string::npos) {
      return bad("expected 'relative_path<TAB>label'");
    }
    std::string path = line.substr(0, tab), label = line.substr(tab + 1);
    if (label.empty()) return bad("empty label");
    if (UnsafePath(path)) return bad("path '" + EscapeInvalidUtf8(path) + "' must be relative, without '..'");
    if (!IsValidUtf8(path)) {
      tree->skipped.push_back({EscapeInvalidUtf8(path), "file name is not valid UTF-8; rename the file"});
      continue;
    }
    entries.emplace_back(std::move(path), std::move(label));
  }
  int32_t unused;
  const bool numeric =
      std::all_of(entries.begin(), entries.end(), [&](const auto& e) { return ParseLabel(e.second, &unused); });
  std::map<std::string, int32_t> index;
  if (!numeric) {
    for (const auto& e : entries) index.emplace(e.second, 0);
    int32_t i = 0;
    for (auto& [name, label] : index) {
      label = i++;
      tree->class_names.push_back(name);
    }
  }
  for (auto& [path, label_text] : entries) {
    int32_t label = -1;
    if (numeric)
      ParseLabel(label_text, &label);
    else
      label = index.at(label_text);
    tree->files.push_back({std::move(path), label, {}});
  }
  return Status::OK();
}

}  // namespace shardpack
