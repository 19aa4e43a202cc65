#include "ops/read/bucket_ids.h"

#include "ground/sample_table.h"
#include "ops/read/opened_dataset.h"

namespace shardpack {

Status ReadBucketIds(const std::string& location, const std::vector<Bucket>& buckets, const RemoteOptions& remote,
                     Env* env, std::vector<uint8_t>* ids) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  const std::string convert =
      "; `shardpack convert " + parsed.shown + " NEW --format wds` writes a dataset that has them";
  if (parsed.shard_list) {
    return Status::InvalidArgument("buckets need each image's size, and the shards " + parsed.shown +
                                   " come without shardpack's sample tables" + convert);
  }
  OpenedDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(parsed, remote, env != nullptr ? env : Env::Default(), &dataset));
  const size_t first = ids->size();
  ids->reserve(first + dataset.manifest.samples);
  std::vector<SampleRecord> records;
  for (const ShardEntry& shard : dataset.manifest.shards) {
    records.clear();
    SHARDPACK_RETURN_IF_ERROR(dataset.format->ReadSampleRecords(dataset.env, dataset.dir, shard, &records));
    for (const SampleRecord& r : records) {
      if (r.width == 0 || r.height == 0) {
        return Status::InvalidArgument("buckets need each image's size, and sample " + r.key + " of " + parsed.shown +
                                       " (shard " + shard.file + ") has none recorded" + convert);
      }
      ids->push_back(uint8_t(NearestBucket(buckets, r.shown_width(), r.shown_height())));
    }
  }
  if (ids->size() - first != dataset.manifest.samples) {
    return Status::DataLoss(parsed.shown + ": the sample tables list " + std::to_string(ids->size() - first) +
                            " samples and the manifest " + std::to_string(dataset.manifest.samples) +
                            "; run shardpack verify " + parsed.shown);
  }
  return Status::OK();
}

}  // namespace shardpack
