#include "formats/mds/mds_dataset.h"

#include "formats/common/format.h"
#include "formats/mds/litdata_index.h"

namespace shardpack {

namespace {

// The files of a LitData index's compressed chunks, as the folder holds them. A "chunk"-level
// chunk's file has no recorded size: it is taken from the folder. And LitData's own reader
// decompresses such a chunk, "chunk-0-3.zstd.bin", into "chunk-0-3.bin" beside it, and later removes
// the compressed file: a folder LitData has read holds either, and the decompressed one is read
// where the compressed one is gone (its size checked against chunk_bytes, the chunk's raw size).
Status FindLitDataChunkFiles(Env* env, const std::string& dir, MdsIndex* index) {
  constexpr std::string_view suffix = ".zstd.bin";
  for (MdsShardInfo& shard : index->shards) {
    if (shard.codec != MdsCodec::kZstd) continue;
    const std::string& name = shard.zip.basename;
    uint64_t size = 0;
    if (env->GetFileSize(JoinPath(dir, name), &size).ok()) {
      shard.zip.bytes = size;
      continue;
    }
    if (name.size() <= suffix.size() || !EndsWith(name, suffix)) continue;
    const std::string plain = name.substr(0, name.size() - suffix.size()) + ".bin";
    if (!env->FileExists(JoinPath(dir, plain))) continue;  // neither: reading it says so
    shard.codec = MdsCodec::kNone;
    shard.compressed = false;
    shard.compression.clear();
    shard.raw.basename = plain;
    shard.zip = MdsFile();
  }
  return Status::OK();
}

}  // namespace

Status OpenMdsDataset(Env* env, const std::string& dir, MdsDataset* dataset) {
  const std::string path = JoinPath(dir, kMdsIndexFileName);
  if (!env->FileExists(path)) return Status::NotFound(dir + " holds no " + kMdsIndexFileName);
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 30, &text));
  dataset->dir = dir;
  if (LooksLikeMdsIndex(text)) {
    dataset->format = DatasetFormat::kMds;
    SHARDPACK_RETURN_IF_ERROR(ParseMdsIndex(text, path, &dataset->index));
  } else if (LooksLikeLitDataIndex(text)) {
    dataset->format = DatasetFormat::kLitData;
    SHARDPACK_RETURN_IF_ERROR(ParseLitDataIndex(text, path, &dataset->index));
    SHARDPACK_RETURN_IF_ERROR(FindLitDataChunkFiles(env, dir, &dataset->index));
  } else {
    return Status::NotFound(path + " is neither an MDS nor a LitData index");
  }
  uint64_t first = 0;
  for (size_t i = 0; i < dataset->index.shards.size(); ++i) {
    dataset->first_sample.push_back(first);
    first += dataset->index.shards[i].samples;
    if (!dataset->by_file.emplace(dataset->index.shards[i].stored().basename, i).second) {
      return Status::DataLoss(path + " lists " + dataset->index.shards[i].stored().basename + " twice");
    }
  }
  return ChooseMdsLayout(dataset->index.columns, path, &dataset->layout);
}

Manifest MdsManifest(const MdsDataset& dataset) {
  Manifest m;
  m.name = BaseName(dataset.dir);
  m.format = dataset.format;
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
                            MdsDecoded* out, const MdsLayout* layout) {
  std::vector<std::string_view> values;
  std::string why;
  if (!SplitMdsSample(sample, dataset.index.columns, &values, &why)) return Status::Corrupt(why);
  return DecodeMdsSample(values, dataset.index.columns, layout != nullptr ? *layout : dataset.layout, want_fields,
                         max_pixels, out);
}

std::string MdsSampleName(const MdsShardInfo& shard, uint64_t local) {
  return shard.stored().basename + "#" + std::to_string(local);
}

}  // namespace shardpack
