#include "formats/parquet/parquet_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace shardpack {
namespace {

bool HasParquetSuffix(std::string_view name) {
  constexpr std::string_view suffix = ".parquet";
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

// An image file's name: a folder holding any is an image tree to pack, even with a .parquet file
// of metadata beside its images.
bool HasImageSuffix(std::string_view name) {
  const size_t dot = name.find_last_of('.');
  if (dot == std::string_view::npos) return false;
  std::string ext(name.substr(dot + 1));
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : {"jpg", "jpeg", "png", "webp", "bmp", "gif", "tif", "tiff"}) {
    if (ext == e) return true;
  }
  return false;
}

bool IsGlob(std::string_view name) { return name.find_first_of("*?[") != std::string_view::npos; }

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool IsFolder(Env* env, const std::string& path) {
  std::vector<DirEntry> entries;
  return env->ListDir(path, &entries).ok();
}

// Every .parquet file under `dir` (relative to `base`), depth first; hidden entries skipped.
// *images: whether an image file was seen.
Status Walk(Env* env, const std::string& base, const std::string& relative, int depth, std::vector<std::string>* names,
            bool* images) {
  const std::string dir = relative.empty() ? base : JoinPath(base, relative);
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(dir, &entries));
  for (const DirEntry& e : entries) {
    if (e.name.empty() || e.name[0] == '.') continue;
    const std::string name = relative.empty() ? e.name : relative + "/" + e.name;
    if (e.type == DirEntry::Type::kDirectory && depth < 8) {
      SHARDPACK_RETURN_IF_ERROR(Walk(env, base, name, depth + 1, names, images));
      if (*images) return Status::OK();
    } else if (e.type == DirEntry::Type::kFile && HasImageSuffix(e.name)) {
      *images = true;  // an image tree: pack's, however many files it holds, is not walked further
      return Status::OK();
    } else if (e.type == DirEntry::Type::kFile && HasParquetSuffix(e.name)) {
      if (names->size() == kMaxParquetFiles) {
        return Status::InvalidArgument(base + " holds more than " + std::to_string(kMaxParquetFiles) +
                                       " .parquet files: name a part of them with a glob ('" + base +
                                       "/data/train-*.parquet')");
      }
      names->push_back(name);
    }
  }
  return Status::OK();
}

// Refuses files of several splits, naming them and the glob that takes one.
Status CheckOneSplit(const std::string& location, ParquetFiles* files) {
  std::map<std::string, size_t> splits;
  std::string folder_of_first;  // of a file of the first split, for the example glob
  for (const std::string& name : files->names) {
    const size_t slash = name.find_last_of('/');
    const std::string split = ParquetSplitOf(slash == std::string::npos ? name : name.substr(slash + 1));
    if (++splits[split] == 1 && folder_of_first.empty() && !split.empty()) {
      folder_of_first = slash == std::string::npos ? "" : name.substr(0, slash + 1);
    }
  }
  if (splits.size() == 1) {
    files->split = splits.begin()->first;
    return Status::OK();
  }
  std::string listed, first;
  for (const auto& [split, count] : splits) {
    const std::string shown = split.empty() ? "(files of no split)" : split;
    listed += (listed.empty() ? "" : ", ") + shown + " (" + std::to_string(count) + " files)";
    if (first.empty() && !split.empty()) first = split;
  }
  return Status::InvalidArgument(location + " holds the splits " + listed +
                                 " of a Hugging Face dataset; read one at a time, e.g. '" +
                                 JoinPath(files->base, folder_of_first + first + "-*.parquet") + "'");
}

}  // namespace

std::string ParquetSplitOf(std::string_view name) {
  if (!HasParquetSuffix(name)) return "";
  std::string_view stem = name.substr(0, name.size() - 8);
  // "-{n:05d}" once or twice ("-00000-of-00008"), digits only.
  auto strip_number = [](std::string_view* s) {
    size_t digits = 0;
    while (digits < s->size() && std::isdigit(static_cast<unsigned char>((*s)[s->size() - 1 - digits]))) ++digits;
    if (digits < 5 || digits == s->size() || (*s)[s->size() - 1 - digits] != '-') return false;
    s->remove_suffix(digits + 1);
    return true;
  };
  if (!strip_number(&stem)) return "";
  constexpr std::string_view of = "-of";
  if (stem.size() > of.size() && stem.substr(stem.size() - of.size()) == of) {
    std::string_view before = stem.substr(0, stem.size() - of.size());
    // "train-00000-of-00008": the part before "-of" is "train-00000".
    std::string_view candidate = before;
    if (strip_number(&candidate)) stem = candidate;
  }
  if (stem.empty() || stem.find('-') != std::string_view::npos) return "";
  return std::string(stem);
}

std::string ParquetBaseOf(Env* env, const std::string& location) {
  return IsFolder(env, location) ? location : ParentOf(location);
}

Status ListParquetFiles(Env* env, const std::string& location, ParquetFiles* files) {
  *files = ParquetFiles();
  const std::string last = BaseName(location);
  if (IsFolder(env, location)) {
    files->base = location;
    bool images = false;
    SHARDPACK_RETURN_IF_ERROR(Walk(env, location, "", 0, &files->names, &images));
    if (images) return Status::NotFound(location + " holds image files: it is an image folder, not Parquet files");
  } else if (IsGlob(last)) {
    files->base = ParentOf(location);
    std::vector<DirEntry> entries;
    if (!env->ListDir(files->base, &entries).ok()) return Status::NotFound(files->base + " is not a folder");
    for (const DirEntry& e : entries) {
      if (e.type == DirEntry::Type::kFile && fnmatch(last.c_str(), e.name.c_str(), FNM_PERIOD) == 0) {
        if (!HasParquetSuffix(e.name)) {
          return Status::InvalidArgument(location + " matches " + e.name + ", which is not a .parquet file");
        }
        files->names.push_back(e.name);
      }
    }
    if (files->names.empty()) return Status::InvalidArgument(location + " matches no file");
  } else if (HasParquetSuffix(last) && env->FileExists(location)) {
    files->base = ParentOf(location);
    files->names.push_back(last);
  }
  if (files->names.empty()) return Status::NotFound(location + " holds no .parquet file");
  std::sort(files->names.begin(), files->names.end());
  return CheckOneSplit(location, files);
}

}  // namespace shardpack
