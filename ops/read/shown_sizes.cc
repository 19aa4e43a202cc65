#include "ops/read/shown_sizes.h"

#include "ground/sample_table.h"
#include "ops/read/opened_dataset.h"

namespace shardpack {

Status ForEachShownSize(const std::string& location, const RemoteOptions& remote, Env* env,
                        const std::function<void(uint32_t width, uint32_t height)>& add) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  const std::string convert =
      "; `shardpack convert " + parsed.shown + " NEW --format wds` writes a dataset that has them";
  if (parsed.shard_list) {
    return Status::InvalidArgument("buckets and token budgets need each image's size, and the shards " + parsed.shown +
                                   " come without shardpack's sample tables" + convert);
  }
  OpenedDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenDataset(parsed, remote, env != nullptr ? env : Env::Default(), &dataset));
  uint64_t samples = 0;
  std::vector<SampleRecord> records;
  for (size_t shard = 0; shard < dataset.shard_count(); ++shard) {
    records.clear();
    SHARDPACK_RETURN_IF_ERROR(dataset.ReadSampleRecords(shard, &records));
    for (const SampleRecord& r : records) {
      if (r.width == 0 || r.height == 0) {
        return Status::InvalidArgument("buckets and token budgets need each image's size, and sample " + r.key +
                                       " of " + parsed.shown + " (shard " + dataset.shard_file(shard) +
                                       ") has none recorded" + convert);
      }
      add(r.shown_width(), r.shown_height());
      ++samples;
    }
  }
  if (samples != dataset.samples()) {
    return Status::DataLoss(parsed.shown + ": the sample tables list " + std::to_string(samples) +
                            " samples and the manifest " + std::to_string(dataset.samples()) +
                            "; run shardpack verify " + parsed.shown);
  }
  return Status::OK();
}

}  // namespace shardpack
