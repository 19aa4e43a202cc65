// The dataset manifest, OUT/manifest.json: what a packed dataset holds and how to check it.
//
// It is written last, atomically, so its presence means every file it lists is complete. For
// WebDataset output it is also a valid `wids` shard-list description (wids_version 1, a shardlist of
// {url, nsamples} with urls relative to the manifest). The normative description is
// docs/formats/manifest.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shardpack/dataset_format.h"
#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kManifestFileName[] = "manifest.json";
inline constexpr int kManifestVersion = 1;
// The journal a pack keeps until it writes the manifest (its format: ops/pack/pack_journal.h). Named here
// because readers tell an interrupted pack from a folder that never held a dataset by it.
inline constexpr char kPackJournalFileName[] = "pack-journal.json";
// Where `shardpack append` packs new shards before it publishes them (a hidden folder in the
// dataset), and the manifest of those shards once they are complete. Named here because verify
// reads it: shards an interrupted append moved into the dataset are its, not strays.
inline constexpr char kAppendStagingFolder[] = ".append";
inline constexpr char kAppendStagedManifest[] = "part-00000-of-00001.json";

// An input file that was not packed, and why.
struct SkippedFile {
  std::string path;    // relative to SRC; bytes that are not UTF-8 are written as \xNN
  std::string reason;  // e.g. "truncated JPEG: no end-of-image marker after the image data"
};

// A side file that belongs to one shard (its index or its sample table), with its checksum.
struct SideFile {
  std::string file;   // relative to the dataset folder
  std::string xxh64;  // 16 hex digits
};

struct ShardEntry {
  std::string file;  // relative to the dataset folder, e.g. "shard-000000.tar"
  uint64_t samples = 0;
  uint64_t bytes = 0;
  std::string xxh64;  // of the whole shard file
  SideFile index;     // DALI index (wds)
  SideFile sample_table;
  std::vector<SideFile> side_files;  // format-specific: labels, keys, offsets, shapes (raw)
  // How many of its samples have each field besides the image, class and metadata (a caption
  // "txt", annotations "json", a mask "seg.png"); empty when no sample has any.
  std::map<std::string, uint64_t> fields;
};

// What a manifest says of the dataset as a whole: everything but its shard list. A Manifest adds the
// list as written; a reader keeps it compacted (CompactManifest, shardpack/shard_table.h).
struct ManifestHeader {
  std::string name;                                   // the dataset folder's base name
  DatasetFormat format = DatasetFormat::kWebDataset;  // written as its name, e.g. "wds"
  int format_version = 1;
  std::string tool_version;  // shardpack version that wrote it
  // The pack options that shape the output, as the JSON object manifest.json holds (compact, keys
  // sorted), e.g. {"keys":"index","prefix":"shard",...}; docs/formats/manifest.md lists them.
  std::string options_json = "{}";
  std::vector<std::string> classes;  // label i is classes[i]; empty for an unlabelled dataset
  uint64_t samples = 0;
  uint64_t bytes = 0;  // sum of shard sizes
  std::vector<SkippedFile> skipped;
  std::vector<std::string> empty_classes;
  bool wids_shard_list = false;  // also a `wids` shard-list description (the format's shards are tar files)
  // 0 for a dataset as packed; each `shardpack append` adds 1 (docs/views.md).
  uint64_t generation = 0;
  // What the append that made this generation took: its source, and the xxh64 of its fingerprint
  // (source, options, inputs, classes; ops/pack/pack_resume.h), so that `append --resume` of the
  // same source after it finished does nothing. Empty for a dataset as packed.
  std::string last_append_source;
  std::string last_append_fingerprint;
  // The manifest's checksum of itself (its "manifest_xxh64"), as read; empty for one not read from
  // a file. A view records its base's, to tell when the base has changed (docs/views.md).
  std::string manifest_xxh64;
};

struct Manifest : ManifestHeader {
  std::vector<ShardEntry> shards;
};

// The field under which a manifest stores the xxh64 of the rest of itself.
inline constexpr char kManifestChecksumKey[] = "manifest_xxh64";

// Writes dir/manifest.json atomically (temporary file, fsync, rename, directory fsync), with its
// own checksum under kManifestChecksumKey.
// The dataset's field counts: for each field, how many samples have it (the shards' sums).
std::map<std::string, uint64_t> FieldCounts(const Manifest& manifest);

Status WriteManifest(Env* env, const std::string& dir, const Manifest& manifest);
// DataLoss when dir/manifest.json's content no longer matches its own checksum, or carries none
// (every manifest of this version is written with one). Readers do not insist on it; verify
// reports it.
Status CheckManifestChecksum(Env* env, const std::string& dir);
// Reads dir/manifest.json. NotFound when absent (a pack that did not finish leaves none), DataLoss
// naming the field when it is malformed, Unsupported when a newer shardpack wrote it.
Status ReadManifest(Env* env, const std::string& dir, Manifest* manifest);

}  // namespace shardpack
