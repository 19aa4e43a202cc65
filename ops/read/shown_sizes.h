// Each sample's image size as shown (EXIF orientation applied), as the dataset's sample tables, or
// the LMDB and raw records, give it: what the loader plans aspect-ratio buckets and token budgets
// with (ops/read/grouped_batch_sampler.h). No image is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/read/opened_dataset.h"
#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

// A dataset opened for its sizes: `location` parsed and opened (OpenDataset). InvalidArgument
// naming `location` for a shard list, which has no sample tables.
struct SizedDataset {
  std::string shown;     // the location as the user gave it, for messages
  std::string convert;   // the command that writes a dataset with sizes, for messages
  OpenedDataset opened;  // its manifest checked against its checksum of itself
  // A local folder that is not a view: OpenLocalDatasetReader takes `opened` as it is.
  bool local = false;
};
Status OpenSizedDataset(const std::string& location, const RemoteOptions& remote, Env* env, SizedDataset* dataset);

// What the dataset's sizes follow from, in a line: its manifest's checksum of itself (a view's: its
// base's, and each selection file's). Empty when the manifest carries no checksum (one written
// before manifests had them): then nothing vouches that the dataset is unchanged.
std::string SizesIdentity(const SizedDataset& dataset);

// The group of every sample of `dataset` (its bucket, its patch grid): group(width, height) is
// called on the `threads` threads (0: every core) that read the tables, so it must be safe to call
// from several at once, and add(groups) gets each shard's groups, shard after shard in dataset
// order, on one thread at a time. InvalidArgument naming the sample and the command that records
// sizes when a sample's size is unknown (shards written by another tool); DataLoss when the tables
// and the manifest disagree.
Status GroupShownSizes(const SizedDataset& dataset, int threads,
                       const std::function<uint32_t(uint32_t width, uint32_t height)>& group,
                       const std::function<void(const std::vector<uint32_t>& groups)>& add);

}  // namespace shardpack
