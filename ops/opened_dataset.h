// What verify, stat and the dataset reader do first with a dataset location: the local folder
// (a URL is cached first, ops/remote_dataset.h), its manifest and its format.
#pragma once

#include <string>

#include "formats/common/format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

struct OpenedDataset {
  std::string dir;  // the local folder: the location itself, or its cached copy
  Manifest manifest;
  const Format* format = nullptr;
};

// NotFound, DataLoss or Unsupported (ReadManifest, FindFormatOf) naming the folder and the fix.
Status OpenDataset(const std::string& location, Env* env, OpenedDataset* dataset);

}  // namespace shardpack
