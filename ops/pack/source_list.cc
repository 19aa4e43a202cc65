#include "ops/pack/source_list.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "ground/sample_keys.h"

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

struct ListEntry {
  std::string path;
  std::string label;  // as written: an integer or a class name
  std::vector<SourceField> fields;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// CSV as RFC 4180 writes it, with `sep` between fields: a field in double quotes may hold `sep`,
// line breaks and "" (one quote). Each row with the line it starts on; blank lines are skipped.
Status SplitDelimited(const std::string& text, char sep, const std::string& list_path,
                      std::vector<std::pair<size_t, std::vector<std::string>>>* rows) {
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  size_t line = 1, row_line = 1;
  const auto end_row = [&] {
    if (any || !field.empty() || !row.empty()) {
      row.push_back(std::move(field));
      rows->emplace_back(row_line, std::move(row));
    }
    row.clear();
    field.clear();
    any = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && field.empty()) {
      quoted = any = true;
    } else if (c == sep) {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_row();
      row_line = ++line;
    } else {
      field += c;
    }
  }
  if (quoted) return Status::InvalidArgument(list_path + " line " + std::to_string(row_line) + ": unclosed quote");
  end_row();
  return Status::OK();
}

// The image, label and fields of one table row, from its named values (nullopt: no value).
Status TableEntry(const std::map<std::string, std::optional<std::string>>& values, const std::string& where,
                  ListEntry* entry) {
  const auto bad = [&](const std::string& why) { return Status::InvalidArgument(where + ": " + why); };
  for (const auto& [name, value] : values) {
    if (name == "image" || name == "path") {
      if (!value || value->empty()) return bad("no image path in column '" + name + "'");
      entry->path = *value;
    } else if (name == "cls" || name == "label") {
      if (value) entry->label = *value;
    } else if (value) {
      entry->fields.push_back({name, "", *value});
    }
  }
  if (entry->path.empty()) return bad("no image path (a column or key named image or path)");
  if (entry->label.empty()) entry->label = "-1";
  return Status::OK();
}

// A column or key that becomes a field: its name must be one (ground/sample_keys.h).
Status CheckFieldColumn(const std::string& name, const std::string& list_path) {
  if (name == "image" || name == "path" || name == "cls" || name == "label") return Status::OK();
  std::string problem = FieldNameProblem(name);
  if (problem.empty() && name == "meta.json") problem = "'meta.json' is reserved for shardpack's metadata";
  for (const char* image : {"jpg", "jpeg", "png", "webp", "bmp"}) {
    if (problem.empty() && name == image) problem = "'" + name + "' would be a second image";
  }
  return problem.empty() ? Status::OK()
                         : Status::InvalidArgument(list_path + ": column '" + name + "' cannot be a field: " + problem);
}

Status ReadJsonLines(const std::string& text, const std::string& list_path, std::vector<ListEntry>* entries) {
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::string where = list_path + " line " + std::to_string(line_no);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
    std::map<std::string, std::optional<std::string>> values;
    for (const auto& item : j.items()) {
      SHARDPACK_RETURN_IF_ERROR(CheckFieldColumn(item.key(), list_path));
      const nlohmann::json& v = item.value();
      // A string is the field's bytes as they are (a caption); anything else its JSON text.
      if (!v.is_null()) values[item.key()] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    entries->emplace_back();
    SHARDPACK_RETURN_IF_ERROR(TableEntry(values, where, &entries->back()));
  }
  return Status::OK();
}

Status ReadDelimited(const std::string& text, char sep, const std::string& list_path, std::vector<ListEntry>* entries) {
  std::vector<std::pair<size_t, std::vector<std::string>>> rows;
  SHARDPACK_RETURN_IF_ERROR(SplitDelimited(text, sep, list_path, &rows));
  if (rows.empty()) return Status::OK();
  const std::vector<std::string> header = rows.front().second;
  for (const std::string& name : header) SHARDPACK_RETURN_IF_ERROR(CheckFieldColumn(name, list_path));
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::string where = list_path + " line " + std::to_string(rows[r].first);
    if (rows[r].second.size() != header.size()) {
      return Status::InvalidArgument(where + ": " + std::to_string(rows[r].second.size()) +
                                     " columns, the header has " + std::to_string(header.size()));
    }
    std::map<std::string, std::optional<std::string>> values;
    for (size_t c = 0; c < header.size(); ++c) {
      // An empty cell is no value: a sample without a caption leaves its cell empty.
      const std::string& cell = rows[r].second[c];
      if (!cell.empty() || header[c] == "image" || header[c] == "path") {
        values[header[c]] = cell.empty() ? std::nullopt : std::optional<std::string>(cell);
      }
    }
    entries->emplace_back();
    SHARDPACK_RETURN_IF_ERROR(TableEntry(values, where, &entries->back()));
  }
  return Status::OK();
}

// Whether a .tsv list is a table: its first line names a column image or path.
bool TsvHasHeader(const std::string& text) {
  const std::string first = text.substr(0, text.find('\n'));
  size_t start = 0;
  for (;;) {
    const size_t tab = first.find('\t', start);
    std::string name = first.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
    if (!name.empty() && name.back() == '\r') name.pop_back();
    if (name == "image" || name == "path") return true;
    if (tab == std::string::npos) return false;
    start = tab + 1;
  }
}

Status ReadPathLabelLines(const std::string& text, const std::string& list_path, SourceTree* tree,
                          std::vector<ListEntry>* entries) {
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
    entries->push_back({std::move(path), std::move(label), {}});
  }
  return Status::OK();
}

}  // namespace

Status ReadSourceList(Env* env, const std::string& list_path, SourceTree* tree) {
  *tree = SourceTree();
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(list_path, uint64_t(1) << 34, &text));
  std::vector<ListEntry> entries;
  if (EndsWith(list_path, ".jsonl") || EndsWith(list_path, ".ndjson")) {
    SHARDPACK_RETURN_IF_ERROR(ReadJsonLines(text, list_path, &entries));
  } else if (EndsWith(list_path, ".csv")) {
    SHARDPACK_RETURN_IF_ERROR(ReadDelimited(text, ',', list_path, &entries));
  } else if (EndsWith(list_path, ".tsv") && TsvHasHeader(text)) {
    SHARDPACK_RETURN_IF_ERROR(ReadDelimited(text, '\t', list_path, &entries));
  } else {
    SHARDPACK_RETURN_IF_ERROR(ReadPathLabelLines(text, list_path, tree, &entries));
  }
  for (ListEntry& e : entries) {
    if (UnsafePath(e.path)) {
      return Status::InvalidArgument(list_path + ": path '" + EscapeInvalidUtf8(e.path) +
                                     "' must be relative, without '..'");
    }
    if (!IsValidUtf8(e.path)) {
      tree->skipped.push_back({EscapeInvalidUtf8(e.path), "file name is not valid UTF-8; rename the file"});
      e.path.clear();  // dropped below
      continue;
    }
    std::sort(e.fields.begin(), e.fields.end(),
              [](const SourceField& a, const SourceField& b) { return a.name < b.name; });
  }
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const ListEntry& e) { return e.path.empty(); }),
                entries.end());
  int32_t unused;
  const bool numeric =
      std::all_of(entries.begin(), entries.end(), [&](const ListEntry& e) { return ParseLabel(e.label, &unused); });
  std::map<std::string, int32_t> index;
  if (!numeric) {
    for (const ListEntry& e : entries) index.emplace(e.label, 0);
    int32_t i = 0;
    for (auto& [name, label] : index) {
      label = i++;
      tree->class_names.push_back(name);
    }
  }
  for (ListEntry& e : entries) {
    int32_t label = -1;
    if (numeric)
      ParseLabel(e.label, &label);
    else
      label = index.at(e.label);
    tree->files.push_back({std::move(e.path), label, std::move(e.fields)});
  }
  return Status::OK();
}

}  // namespace shardpack
