// What verify, stat and the dataset reader do first with a dataset location: the local folder
// (a URL is cached first when there is a cache folder, storage/remote_dataset.h, and read through
// memory when there is none, storage/streamed_dataset_env.h), its manifest and its format.
#pragma once

#include <memory>
#include <string>

#include "formats/common/format.h"
#include "ground/view_manifest.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/location.h"
#include "storage/streamed_dataset_env.h"

namespace shardpack {

// A view (docs/views.md): its own folder and manifest. The OpenedDataset that holds it is its base.
struct OpenedView {
  std::string dir;
  std::string shown;   // the location as the user gave it, for messages
  Env* env = nullptr;  // what reads the view's own files (its base may be read through another)
  ViewManifest manifest;
};

struct OpenedDataset {
  std::string dir;  // the local folder: the location itself, or its cached copy; streamed: the URL
  Manifest manifest;
  // A view whose base grew by appends since it was made: the samples they added, which the view
  // does not select (CheckViewBase); 0 otherwise.
  uint64_t view_base_newer = 0;
  const Format* format = nullptr;
  // The manifest was made from another tool's index (MDS's index.json), not read from a
  // manifest.json: it has no checksum of itself to check.
  bool foreign_index = false;
  Env* env = nullptr;  // what reads the dataset's files: the caller's Env, or `streamed`
  // A URL without a cache folder: its files through memory (a shard downloaded when it is opened).
  std::unique_ptr<StreamedDatasetEnv> streamed;
  // Set when the location is a view: dir, manifest, format and env are then its base's (checked
  // to be the dataset it was made from, CheckViewBase).
  std::shared_ptr<const OpenedView> view;

  // What the location holds, a view's selection or the whole dataset: its shards (a view's: the
  // base shards it takes samples from), samples, and the sample records of shard i (a view's:
  // the selected ones of the base shard, in order).
  size_t shard_count() const;
  uint64_t samples() const;
  std::string shard_file(size_t shard) const;  // relative to `dir`
  // Its class names: a relabelled view's own (the records below carry its labels), else the base's.
  const std::vector<std::string>& classes() const;
  Status ReadSampleRecords(size_t shard, std::vector<SampleRecord>* records) const;
  // The same records' sizes as shown (Format::ReadShownSizes).
  Status ReadShownSizes(size_t shard, std::vector<ShownSize>* sizes) const;
};

// NotFound, DataLoss or Unsupported (ReadManifest, FindFormatOf) naming the folder and the fix.
// check_manifest: DataLoss also when the manifest no longer matches its checksum of itself
// (checked on the same parse; a URL's manifest is always checked).
// A view opens its base too (open_view_base false: only the view, for a caller that opens the base
// its own way, the dataset reader).
Status OpenDataset(const Location& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset,
                   bool check_manifest = false, bool open_view_base = true);

// The reader DatasetReader::Open makes of a local folder that is not a view, over `dataset` opened
// with check_manifest (its manifest moved into the reader): for a caller that opened the dataset
// already, so that a large manifest is not read and parsed twice.
Status OpenLocalDatasetReader(OpenedDataset* dataset, const RemoteOptions& remote,
                              std::unique_ptr<DatasetReader>* reader);
// Where a view's base lies, as a location to open.
std::string ViewBaseLocation(const OpenedView& view);

// Shards of another tool that `location` names, as paths to read: a shard list (a brace range, a
// "::" list, a glob, a .tar path; remote ones cached, storage/remote_dataset.h), or a local folder
// that holds such shards and neither a manifest nor an interrupted pack's journal (webdataset's
// ShardWriter writes such a folder). Empty when the location is a dataset (or nothing: opening it
// then says what is wrong). Sorted by name for a folder, in the list's order for a list.
Status FindForeignShards(const Location& location, const RemoteOptions& remote, Env* env,
                         std::vector<std::string>* paths);

// The entry of verify and stat: `location` as the user gave it, parsed here (ParseLocation), then
// opened as above; env nullptr: Env::Default().
Status OpenDatasetAt(const std::string& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset);

}  // namespace shardpack
