#include "ops/source_scan.h"

#include <algorithm>
#include <cstdio>

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

class Scanner {
 public:
  Scanner(Env* env, std::string root, SourceTree* tree) : env_(env), root_(std::move(root)), tree_(tree) {}

  Status Run() {
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
    for (const DirEntry& e : entries) {
      if (IsHidden(e.name) || e.type == DirEntry::Type::kDirectory) continue;
      if (labelled) {
        Skip(e.name,
             "file lies directly in SRC, which has class folders, so it has no class; move it into a class folder");
      } else {
        AddEntry("", e, -1);
      }
    }
    for (size_t label = 0; label < class_dirs.size(); ++label) {
      tree_->class_names.push_back(class_dirs[label]);
      size_t before = tree_->files.size();
      SHARDPACK_RETURN_IF_ERROR(WalkClassDir(class_dirs[label], static_cast<int32_t>(label)));
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

  // Visits rel (a folder relative to root) depth-first; ancestors_ holds the folders on the path so
  // that a symlink pointing back up is recognised as a loop.
  Status WalkClassDir(const std::string& rel, int32_t label) {
    const std::string dir = JoinPath(root_, rel);
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
    for (const DirEntry& e : entries) {
      if (IsHidden(e.name)) continue;
      if (e.type == DirEntry::Type::kDirectory) {
        if (!IsValidUtf8(e.name)) {
          Skip(rel + "/" + e.name, "folder name is not valid UTF-8; rename it");
          continue;
        }
        SHARDPACK_RETURN_IF_ERROR(WalkClassDir(rel + "/" + e.name, label));
      } else {
        AddEntry(rel, e, label);
      }
    }
    ancestors_.pop_back();
    return Status::OK();
  }

  void AddEntry(const std::string& rel_dir, const DirEntry& e, int32_t label) {
    std::string relpath = rel_dir.empty() ? e.name : rel_dir + "/" + e.name;
    if (e.type != DirEntry::Type::kFile) {
      Skip(relpath, e.is_symlink ? "dangling symlink" : "not a regular file");
    } else if (!IsValidUtf8(e.name)) {
      Skip(relpath, "file name is not valid UTF-8; rename the file");
    } else {
      tree_->files.push_back({std::move(relpath), label});
    }
  }

  void Skip(const std::string& relpath, std::string reason) {
    tree_->skipped.push_back({EscapeInvalidUtf8(relpath), std::move(reason)});
  }

  Env* env_;
  std::string root_;
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

Status ScanSourceTree(Env* env, const std::string& root, SourceTree* tree) {
  *tree = SourceTree();
  return Scanner(env, root, tree).Run();
}

}  // namespace shardpack
