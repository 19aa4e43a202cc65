// What verify, stat and the dataset reader do first with a dataset location: the local folder
// (a URL is cached first when there is a cache folder, storage/remote_dataset.h, and read through
// memory when there is none, storage/streamed_dataset_env.h), its manifest and its format.
#pragma once

#include <memory>
#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/location.h"
#include "storage/streamed_dataset_env.h"

namespace shardpack {

struct OpenedDataset {
  std::string dir;  // the local folder: the location itself, or its cached copy; streamed: the URL
  Manifest manifest;
  const Format* format = nullptr;
  Env* env = nullptr;  // what reads the dataset's files: the caller's Env, or `streamed`
  // A URL without a cache folder: its files through memory (a shard downloaded when it is opened).
  std::unique_ptr<StreamedDatasetEnv> streamed;
};

// NotFound, DataLoss or Unsupported (ReadManifest, FindFormatOf) naming the folder and the fix.
// check_manifest: DataLoss also when the manifest no longer matches its checksum of itself
// (checked on the same parse; a URL's manifest is always checked).
Status OpenDataset(const Location& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset,
                   bool check_manifest = false);

// The entry of verify and stat: `location` as the user gave it, parsed here (ParseLocation), then
// opened as above; env nullptr: Env::Default().
Status OpenDatasetAt(const std::string& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset);

}  // namespace shardpack
