// An MDS dataset folder (MosaicML Streaming's MDSWriter), or LitData's, as shardpack reads it in place: its
// index.json, which columns are the image, the label and the fields, and the manifest that stat,
// verify, the reader and convert take it by (made here, never written: the folder stays as
// Streaming wrote it).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/mds/mds_index.h"
#include "formats/mds/mds_sample.h"
#include "shardpack/dataset_format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

struct MdsDataset {
  DatasetFormat format = DatasetFormat::kMds;  // kLitData: a LitData index read in MDS's terms
  std::string dir;
  MdsIndex index;
  MdsLayout layout;
  std::vector<uint64_t> first_sample;               // of each shard, in dataset order
  std::unordered_map<std::string, size_t> by_file;  // a shard by its file as stored (the manifest's name)
};

// Reads dir/index.json, MDS's or LitData's (litdata_index.h). NotFound when the folder has none or
// it is neither; the errors of the index's parser and of ChooseMdsLayout otherwise.
Status OpenMdsDataset(Env* env, const std::string& dir, MdsDataset* dataset);

// The dataset's manifest: format mds, a shard per shard file (as stored: its compressed file when
// compressed) with its sample count, size and xxh64 when index.json lists one, no classes (labels
// are numbers), and a "json" field on every sample when columns other than the image and label exist.
Manifest MdsManifest(const MdsDataset& dataset);

// Splits and decodes one sample's bytes by the dataset's layout (or by `layout` when given).
// Corrupt saying what is wrong.
Status DecodeMdsSampleBytes(const MdsDataset& dataset, std::string_view sample, bool want_fields, uint64_t max_pixels,
                            MdsDecoded* out, const MdsLayout* layout = nullptr);

// Where a sample is named in messages: "shard.00003.mds.zstd#17".
std::string MdsSampleName(const MdsShardInfo& shard, uint64_t local);

}  // namespace shardpack
