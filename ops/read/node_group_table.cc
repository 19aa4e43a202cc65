#include "ops/read/node_group_table.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "ground/checksum.h"

namespace shardpack {
namespace {

// Maps `path` and checks it (node_group_table.h): true with *file set when it is good; false with
// *problem saying why when a file is there but cannot be used, with *problem empty when none is.
bool MapCheckedTable(Env* env, const std::string& path, const GroupTableSpec& spec, std::unique_ptr<MappedFile>* file,
                     std::string* problem) {
  problem->clear();
  FileStat st;
  if (!env->StatPath(path, &st).ok()) return false;  // none there
  const Status mapped = env->MapFile(path, file);
  if (!mapped.ok()) {
    *problem = "cannot be read (" + mapped.message() + ")";
    return false;
  }
  const FileStat& opened = (*file)->stat();
  // As a check's record (storage/cache_folder.h): a table is its user's alone, or another user
  // (a team member too) could plant groupings with a checksum that matches them.
  if (opened.uid != uint32_t(::geteuid())) {
    *problem = "belongs to user " + std::to_string(opened.uid) + ", not to you";
    return false;
  }
  if ((opened.mode & 0022) != 0) {
    *problem = "is writable by others than you";
    return false;
  }
  const std::string_view data = (*file)->data();
  if (data.size() < kGroupTableTrailerBytes) {
    *problem = "is too short to hold a table (" + std::to_string(data.size()) + " bytes)";
    return false;
  }
  const std::string_view entries = data.substr(0, data.size() - kGroupTableTrailerBytes);
  if (entries.size() % spec.entry_bytes != 0 ||
      data.substr(entries.size()) != GroupTableTrailer(entries, spec.entry_bytes, spec.key)) {
    *problem = "does not match its trailer (changed, cut short, or for another dataset)";
    return false;
  }
  if (!spec.valid(entries)) {
    *problem = "holds an entry out of range";
    return false;
  }
  return true;
}

}  // namespace

std::string GroupTableTrailer(std::string_view entries, size_t entry_bytes, const std::string& key) {
  char line[kGroupTableTrailerBytes + 1];
  std::snprintf(line, sizeof(line), "SPGROUPS1 %016" PRIx64 " %zu %016" PRIx64 " %016" PRIx64 "\n",
                uint64_t(entries.size() / entry_bytes), entry_bytes % 10, Xxh64(entries), Xxh64(key));
  return line;
}

Status OpenNodeGroupTable(Env* env, const std::string& cache_dir, const CacheModes& modes, const GroupTableSpec& spec,
                          NodeGroupTable* table) {
  *table = NodeGroupTable();
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheFolder(env, cache_dir, modes));
  const std::string dir = JoinPath(cache_dir, "sample-groups");
  SHARDPACK_RETURN_IF_ERROR(PrepareCacheSubfolders(env, cache_dir, dir, modes));
  // A team's folder holds a table per user (each trusts only their own); a private folder one.
  const std::string path =
      JoinPath(dir, ChecksumHex(Xxh64(spec.key)) + (modes.team ? "-" + std::to_string(::geteuid()) : "") + ".groups");
  std::unique_ptr<MappedFile> file;
  std::string problem;
  const auto take = [&](GroupTableOrigin origin) {
    table->entries = file->data().substr(0, file->data().size() - kGroupTableTrailerBytes);
    table->owner = std::shared_ptr<const MappedFile>(std::move(file));
    table->origin = origin;
    return Status::OK();
  };
  // Most opens find the table there: no lock, so that a node's processes check it at once.
  if (MapCheckedTable(env, path, spec, &file, &problem)) return take(GroupTableOrigin::kMapped);
  // One process makes it; the others wait here, then find it made.
  std::unique_ptr<FileLock> lock;
  const Status locked = env->LockFile(path + ".lock", &lock, modes.file());
  if (!locked.ok() && locked.code() != Status::Code::kUnsupported) return locked;
  if (MapCheckedTable(env, path, spec, &file, &problem)) return take(GroupTableOrigin::kMapped);
  file.reset();
  if (!problem.empty()) {
    table->note = "the node's table of sample groups " + path + " " + problem + ": made again";
    RemoveCachedCopy(env, path);
  }
  std::string entries;
  SHARDPACK_RETURN_IF_ERROR(spec.make(&entries));
  const std::string trailer = GroupTableTrailer(entries, spec.entry_bytes, spec.key);
  // A cache: not synced (a machine that crashes leaves a file its trailer refuses, made again).
  const Status written = WriteCacheFilePieces(env, path, {entries, trailer}, modes.record(), /*sync=*/false);
  if (written.ok() && MapCheckedTable(env, path, spec, &file, &problem)) {
    return take(GroupTableOrigin::kMade);
  }
  // Nothing lost: this process keeps what it made, as without a cache folder.
  const std::string why = written.ok() ? problem : written.message();
  table->note += std::string(table->note.empty() ? "" : "; ") + "cannot keep the node's table of sample groups in " +
                 path + " (" + why + "): this process keeps its own copy";
  auto own = std::make_shared<const std::string>(std::move(entries));
  table->entries = *own;
  table->owner = std::move(own);
  table->origin = GroupTableOrigin::kMade;
  return Status::OK();
}

}  // namespace shardpack
