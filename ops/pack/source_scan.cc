#include "ops/pack/source_scan.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ground/sample_keys.h"

namespace shardpack {
namespace {

size_t Utf8SequenceLength(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t len;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    min = 0x10000;
  } else
    return 0;
  if (i + len > s.size()) return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool IsHidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

// The part of a file name after its first dot ("seg.png" of "0001.seg.png"); empty without one.
std::string FieldOf(const std::string& name) {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

bool IsImageField(const std::string& field) {
  std::string lower = field;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return lower == "jpg" || lower == "jpeg" || lower == "png" || lower == "webp" || lower == "bmp";
}

class Scanner {
 public:
  Scanner(Env* env, std::string root, SourceLayout layout, SourceTree* tree)
      : env_(env), root_(std::move(root)), layout_(layout), tree_(tree) {}

  Status Run() {
    if (layout_ == SourceLayout::kSamples) return WalkFolder("", -1);
    std::vector<DirEntry> entries;
    SHARDPACK_RETURN_IF_ERROR(ListSorted(root_, &entries));
    FileId root_id;
    SHARDPACK_RETURN_IF_ERROR(env_->GetFileId(root_, &root_id));
    ancestors_.push_back(root_id);

    std::vector<std::string> class_dirs;
    for (const DirEntry& e : entries) {
      if (e.type == DirEntry::Type::kDirectory && !IsHidden(e.name)) {
        if (!IsValidUtf8(e.name)) {
          Skip(e.name, "class folder name is not valid UTF-8; rename the folder");
          continue;
        }
        class_dirs.push_back(e.name);
      }
    }
    const bool labelled = !class_dirs.empty();
    std::vector<DirEntry> files;
    for (const DirEntry& e : entries) {
      if (IsHidden(e.name) || e.type == DirEntry::Type::kDirectory) continue;
      if (labelled) {
        Skip(e.name,
             "file lies directly in SRC, which has class folders, so it has no class; move it into a class folder");
      } else {
        files.push_back(e);
      }
    }
    AddFolderFiles("", files, -1);
    for (size_t label = 0; label < class_dirs.size(); ++label) {
      tree_->class_names.push_back(class_dirs[label]);
      size_t before = tree_->files.size();
      SHARDPACK_RETURN_IF_ERROR(WalkFolder(class_dirs[label], static_cast<int32_t>(label)));
      if (tree_->files.size() == before) tree_->empty_classes.push_back(class_dirs[label]);
    }
    return Status::OK();
  }

 private:
  Status ListSorted(const std::string& dir, std::vector<DirEntry>* entries) {
    SHARDPACK_RETURN_IF_ERROR(env_->ListDir(dir, entries));
    std::sort(entries->begin(), entries->end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return Status::OK();
  }

  // Visits rel (a folder relative to root, "" for root) depth-first; ancestors_ holds the folders
  // on the path so that a symlink pointing back up is recognised as a loop.
  Status WalkFolder(const std::string& rel, int32_t label) {
    const std::string dir = rel.empty() ? root_ : JoinPath(root_, rel);
    FileId id;
    Status s = env_->GetFileId(dir, &id);
    if (!s.ok()) {
      Skip(rel, "cannot open folder: " + s.message());
      return Status::OK();
    }
    if (std::find(ancestors_.begin(), ancestors_.end(), id) != ancestors_.end()) {
      Skip(rel, "symlink loop: this folder is already being scanned; not entered again");
      return Status::OK();
    }
    std::vector<DirEntry> entries;
    s = ListSorted(dir, &entries);
    if (!s.ok()) {
      Skip(rel, "cannot list folder: " + s.message());
      return Status::OK();
    }
    ancestors_.push_back(id);
    const std::string prefix = rel.empty() ? "" : rel + "/";
    // Each sample is added where its first file sorts among the folder's entries, so that a tree
    // without fields packs in the order it always did.
    std::map<std::string, std::vector<std::string>> groups = GroupFiles(entries);
    for (const DirEntry& e : entries) {
      if (IsHidden(e.name)) continue;
      if (e.type == DirEntry::Type::kDirectory) {
        if (!IsValidUtf8(e.name)) {
          Skip(prefix + e.name, "folder name is not valid UTF-8; rename it");
          continue;
        }
        SHARDPACK_RETURN_IF_ERROR(WalkFolder(prefix + e.name, label));
      } else {
        AddFile(prefix, e, groups, label);
      }
    }
    ancestors_.pop_back();
    return Status::OK();
  }

  // The files of one folder (sorted by name, none hidden and no folders) as samples.
  void AddFolderFiles(const std::string& prefix, const std::vector<DirEntry>& entries, int32_t label) {
    std::map<std::string, std::vector<std::string>> groups = GroupFiles(entries);
    for (const DirEntry& e : entries) AddFile(prefix, e, groups, label);
  }

  static std::string UnusableFile(const DirEntry& e) {
    if (e.type != DirEntry::Type::kFile) return e.is_symlink ? "dangling symlink" : "not a regular file";
    if (!IsValidUtf8(e.name)) return "file name is not valid UTF-8; rename the file";
    return "";
  }

  // The usable files of a folder's sorted entries, grouped by the name before the first dot:
  // stem -> names, in name order.
  static std::map<std::string, std::vector<std::string>> GroupFiles(const std::vector<DirEntry>& entries) {
    std::map<std::string, std::vector<std::string>> groups;
    for (const DirEntry& e : entries) {
      if (IsHidden(e.name) || e.type == DirEntry::Type::kDirectory || !UnusableFile(e).empty()) continue;
      groups[e.name.substr(0, e.name.find('.'))].push_back(e.name);
    }
    return groups;
  }

  // A file entry: reported if unusable; the whole sample when it is its group's first file.
  void AddFile(const std::string& prefix, const DirEntry& e,
               const std::map<std::string, std::vector<std::string>>& groups, int32_t label) {
    const std::string problem = UnusableFile(e);
    if (!problem.empty()) return Skip(prefix + e.name, problem);
    const auto group = groups.find(e.name.substr(0, e.name.find('.')));
    if (group != groups.end() && group->second.front() == e.name) AddGroup(prefix, group->first, group->second, label);
  }

  void AddGroup(const std::string& prefix, const std::string& stem, const std::vector<std::string>& names,
                int32_t label) {
    std::vector<std::string> images;
    for (const std::string& n : names) {
      if (IsImageField(FieldOf(n))) images.push_back(n);
    }
    const bool samples_layout = layout_ == SourceLayout::kSamples;
    if (!samples_layout && images.size() != 1) {  // one sample per file, as without fields
      for (const std::string& n : names) tree_->files.push_back({prefix + n, label, {}});
      return;
    }
    if (images.empty()) {
      for (const std::string& n : names) {
        Skip(prefix + n, "sample '" + prefix + stem + "' has no image (a .jpg, .jpeg, .png, .webp or .bmp file)");
      }
      return;
    }
    SourceFile sample{prefix + images.front(), label, {}};
    for (const std::string& n : names) {
      if (n == images.front()) continue;
      const std::string field = FieldOf(n);
      std::string problem = IsImageField(field)
                                ? "a second image of sample '" + prefix + stem +
                                      "'; a sample has one image (name a mask like " + stem + ".seg.png)"
                                : FieldNameProblem(field);
      if (problem.empty() && field == "meta.json") {
        problem = "field name 'meta.json' is reserved for shardpack's metadata; rename the file";
      }
      if (problem.empty() && field == "cls" && !samples_layout) {
        problem = "the class comes from the folder; a .cls file beside an image is not packed";
      }
      if (problem.empty()) {
        sample.fields.push_back({field, prefix + n, ""});
      } else {
        Skip(prefix + n, problem);
      }
    }
    tree_->files.push_back(std::move(sample));
  }

  void Skip(const std::string& relpath, std::string reason) {
    tree_->skipped.push_back({EscapeInvalidUtf8(relpath), std::move(reason)});
  }

  Env* env_;
  std::string root_;
  SourceLayout layout_;
  SourceTree* tree_;
  std::vector<FileId> ancestors_;
};

}  // namespace

bool IsValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string EscapeInvalidUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02X", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

Status ScanSourceTree(Env* env, const std::string& root, SourceLayout layout, SourceTree* tree) {
  *tree = SourceTree();
  return Scanner(env, root, layout, tree).Run();
}

}  // namespace shardpack
