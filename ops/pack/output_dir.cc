// What pack does to its output folder before and after a run (see ops/pack/output_dir.h).
#include "ops/pack/output_dir.h"

#include <climits>
#include <cstdlib>

#include "formats/registry/registry.h"
#include "shardpack/manifest.h"

namespace shardpack {

// The files a pack writes: the manifest, the journal, temporaries, and any format's own files.
bool IsOurOutputFile(const std::string& name) {
  if (name == kManifestFileName || name == kPackJournalFileName || EndsWith(name, ".tmp")) return true;
  for (const Format* f : AllFormats()) {
    if (f->OwnsFile(name)) return true;
  }
  return false;
}

namespace {

// `path` made absolute and free of symbolic links, though it need not exist yet: its longest
// existing ancestor goes through realpath, the components below it are appended as written. (OUT is
// checked before it is created, so that a refused OUT is not left behind as an empty folder.)
std::string ResolvedPath(const std::string& path) {
  std::string head = path.empty() ? "." : path, tail;
  while (true) {
    char resolved[PATH_MAX];
    if (::realpath(head.c_str(), resolved)) return std::string(resolved) + tail;
    const size_t slash = head.find_last_of('/');
    if (slash == std::string::npos) {  // a relative path none of whose ancestors exists
      tail = "/" + head + tail;
      head = ".";
    } else if (slash == 0) {
      return path;  // a top-level folder that does not exist: nothing below it to resolve
    } else {
      tail = head.substr(slash) + tail;
      head = head.substr(0, slash);
    }
  }
}

}  // namespace

Status RemoveOurOutputFiles(Env* env, const std::string& out, const OwnsOutputFile& owns) {
  SHARDPACK_RETURN_IF_ERROR(env->FreeUnfinishedWrites(out, owns));
  const std::string manifest = JoinPath(out, kManifestFileName);
  if (owns(kManifestFileName) && env->FileExists(manifest)) SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(manifest));
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  for (const DirEntry& e : entries) {
    if (e.type == DirEntry::Type::kFile && owns(e.name)) {
      SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(JoinPath(out, e.name)));
    }
  }
  return Status::OK();
}

Status RemoveTemporaryFiles(Env* env, const std::string& out, const OwnsOutputFile& owns) {
  SHARDPACK_RETURN_IF_ERROR(env->FreeUnfinishedWrites(out, owns));  // a killed run's multipart uploads
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  for (const DirEntry& e : entries) {
    if (e.type == DirEntry::Type::kFile && e.name.size() > 4 && EndsWith(e.name, ".tmp") && owns(e.name)) {
      SHARDPACK_RETURN_IF_ERROR(env->RemoveFile(JoinPath(out, e.name)));
    }
  }
  return Status::OK();
}

void RemoveIfEmpty(Env* env, const std::string& out) {
  std::vector<DirEntry> entries;
  if (env->ListDir(out, &entries).ok() && entries.empty()) (void)env->RemoveEmptyDir(out);
}

Status PrepareOutputDir(Env* env, const std::string& src, const std::string& out, bool force, bool resume) {
  const std::string s = ResolvedPath(src), o = ResolvedPath(out);
  if (!src.empty() && (o == s || o.rfind(s + "/", 0) == 0)) {  // src: empty for a SampleWriter
    return Status::InvalidArgument("output folder " + out + " lies inside the source folder " + src +
                                   "; choose an output folder outside it");
  }
  SHARDPACK_RETURN_IF_ERROR(env->CreateDirs(out));
  if (resume && !force) return Status::OK();
  std::vector<DirEntry> entries;
  SHARDPACK_RETURN_IF_ERROR(env->ListDir(out, &entries));
  if (entries.empty()) return Status::OK();
  if (!force && env->FileExists(JoinPath(out, kPackJournalFileName))) {
    return Status::InvalidArgument("output folder " + out +
                                   " holds an interrupted pack; pass --resume to continue it or --force to start over");
  }
  if (!force) {
    return Status::InvalidArgument("output folder " + out +
                                   " is not empty; choose an empty folder or pass --force to replace its dataset");
  }
  return RemoveOurOutputFiles(env, out);
}

}  // namespace shardpack
