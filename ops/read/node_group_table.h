// The node's table of each sample's group (its aspect-ratio bucket, or its patch grid), kept in the
// cache folder so that the ranks and loader processes of a node read the dataset's sample tables
// once between them and share one copy of the table: a mapping of one file, whose pages are the
// page cache's (docs/buckets.md, "Cost"). Without a cache folder each process reads every table
// and keeps its own copy (at a billion samples, half a minute and 1 GB a process).
//
// The file, <cache_dir>/sample-groups/<the key's XXH64>.groups (in a team's folder
// <the key's XXH64>-<uid>.groups: a table per user), holds the entries (entry_bytes each,
// in this machine's byte order, from offset 0 so that a mapping aligns them), then a trailer of
// kGroupTableTrailerBytes:
//   "SPGROUPS1 <entries> <entry bytes> <the entries' XXH64> <the key's XXH64>\n"
// (16, 1, 16 and 16 hex digits). The key says what the entries follow from (each dataset's
// SizesIdentity and the grouping rule): a dataset that changes has another key, hence another file.
//
// Hostile until checked: a file is used only when it is a regular file (not a link) of this user's,
// writable by no one else (as a check's record: storage/cache_folder.h), its trailer names the key, the entry size and
// its length, its entries match their checksum and every one passes spec.valid. Anything else is
// made again, and said. One process makes the file, under <file>.lock; the others wait and map
// what it wrote, which appears whole or not at all (written under a temporary name, then renamed):
// a maker that is killed leaves no file that looks complete, and its lock dies with it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardpack/env.h"
#include "shardpack/status.h"
#include "storage/cache_folder.h"

namespace shardpack {

inline constexpr size_t kGroupTableTrailerBytes = 63;

struct GroupTableSpec {
  std::string key;         // what the entries follow from, any text
  size_t entry_bytes = 1;  // 1 or 4
  // Whether every entry is one the caller can use (a bucket it has, a grid within its budget).
  std::function<bool(std::string_view entries)> valid;
  // Makes the entries (reads the sample tables): called when no good file is there.
  std::function<Status(std::string* entries)> make;
};

// How the table was had.
enum class GroupTableOrigin {
  kMapped,  // a good file was there
  kMade,    // made by this process, written, then mapped
};

struct NodeGroupTable {
  // What keeps `entries` valid: the mapped file, or the bytes this process made and could not write.
  std::shared_ptr<const void> owner;
  std::string_view entries;
  GroupTableOrigin origin = GroupTableOrigin::kMapped;
  std::string note;  // empty, or what was wrong with a file found there (then made again)
};

// The table for `spec`: mapped when the cache folder holds a good one, made and written first when
// it does not. The folder is prepared and checked as every cache folder is (PrepareCacheFolder).
Status OpenNodeGroupTable(Env* env, const std::string& cache_dir, const CacheModes& modes, const GroupTableSpec& spec,
                          NodeGroupTable* table);

// The trailer a file of `entries` entries of `entry_bytes` for `key` ends with.
std::string GroupTableTrailer(std::string_view entries, size_t entry_bytes, const std::string& key);

}  // namespace shardpack
