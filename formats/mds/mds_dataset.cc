#include "formats/mds/mds_dataset.h"

namespace shardpack {

Status OpenMdsDataset(Env* env, const std::string& dir, MdsDataset* dataset) {
  const std::string path = JoinPath(dir, kMdsIndexFileName);
  if (!env->FileExists(path)) return Status::NotFound(dir + " holds no " + kMdsIndexFileName);
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 30, &text));
  if (!LooksLikeMdsIndex(text)) return Status::NotFound(path + " is not an MDS index");
  dataset->dir = dir;
  SHARDPACK_RETURN_IF_ERROR(ParseMdsIndex(text, path, &dataset->index));
  return ChooseMdsLayout(dataset->index.columns, path, &dataset->layout);
}

Manifest MdsManifest(const MdsDataset& dataset) {
  Manifest m;
  m.name = BaseName(dataset.dir);
  m.format = DatasetFormat::kMds;
  m.samples = dataset.index.samples;
  for (const MdsShardInfo& shard : dataset.index.shards) {
    ShardEntry e;
    e.file = shard.stored().basename;
    e.samples = shard.samples;
    e.bytes = shard.stored().bytes;
    if (const auto h = shard.stored().hashes.find("xxh64"); h != shard.stored().hashes.end()) e.xxh64 = h->second;
    if (!dataset.layout.fields.empty() && shard.samples > 0) e.fields["json"] = shard.samples;
    m.bytes += e.bytes;
    m.shards.push_back(std::move(e));
  }
  return m;
}

Status DecodeMdsSampleBytes(const MdsDataset& dataset, std::string_view sample, bool want_fields, uint64_t max_pixels,
                            MdsDecoded* out) {
  std::vector<std::string_view> values;
  std::string why;
  if (!SplitMdsSample(sample, dataset.index.columns, &values, &why)) return Status::Corrupt(why);
  return DecodeMdsSample(values, dataset.index.columns, dataset.layout, want_fields, max_pixels, out);
}

std::string MdsSampleName(const MdsShardInfo& shard, uint64_t local) {
  return shard.stored().basename + "#" + std::to_string(local);
}

}  // namespace shardpack
