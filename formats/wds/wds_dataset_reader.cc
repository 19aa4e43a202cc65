#include "formats/wds/wds_dataset_reader.h"

#include <string_view>

#include "formats/common/shard_file.h"
#include "formats/wds/dali_index.h"
#include "formats/wds/wds_naming.h"
#include "ground/packed_keys.h"
#include "ground/sample_table.h"
#include "ground/side_file.h"

namespace shardpack {

// Fixed-width records and the keys back to back (PackedKeys): about 60 bytes a sample besides its
// key, instead of a string and a vector each.
struct WdsDatasetReader::ShardSamples {
  struct Sample {
    uint64_t offset = 0, size = 0;            // the image member's data
    uint64_t json_offset = 0, json_size = 0;  // the metadata member's; size 0 without one
    int32_t label = -1;
    ImageFormat format = ImageFormat::kUnknown;
    uint32_t fields_end = 0;  // in fields: this sample's are [previous fields_end, fields_end)
  };
  std::unique_ptr<RandomAccessFile> file;
  std::vector<Sample> samples;
  PackedKeys keys;
  std::vector<WdsSampleLocation::Field> fields;  // the rare other members (captions, masks)

  uint64_t memory_bytes() const {
    uint64_t bytes = sizeof(*this) + samples.capacity() * sizeof(Sample) + keys.memory_bytes();
    for (const WdsSampleLocation::Field& f : fields) bytes += sizeof(f) + f.name.capacity();
    return bytes;
  }
  void Reserve(size_t n) {
    samples.reserve(n);
    keys.Reserve(n);
  }
  void Add(const WdsSampleLocation& e) {
    Sample s;
    s.offset = e.offset, s.size = e.size, s.json_offset = e.json_offset, s.json_size = e.json_size;
    s.label = e.label, s.format = e.format;
    keys.Add(e.key);
    fields.insert(fields.end(), e.fields.begin(), e.fields.end());
    s.fields_end = uint32_t(fields.size());
    samples.push_back(s);
  }
};

namespace {

using ShardSamples = WdsDatasetReader::ShardSamples;

// The samples of one shard of a dataset folder: its sample table and DALI index, each checked
// against the manifest's checksum, joined, every location checked to lie inside the shard.
Status LoadDatasetShard(Env* env, const std::string& dir, const ShardEntry& shard,
                        std::unique_ptr<ShardSamples>* loaded) {
  OpenedShard opened;
  SHARDPACK_RETURN_IF_ERROR(OpenShardWithTable(env, dir, shard, &opened));
  const std::vector<SampleRecord>& table = opened.table;
  const uint64_t shard_bytes = opened.bytes;
  std::string text;
  DaliIndexView index;
  SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, shard.index, &text));
  SHARDPACK_RETURN_IF_ERROR(ParseDaliIndex(text, &index));
  if (index.samples() != shard.samples) {
    return Status::DataLoss(dir + "/" + shard.index.file +
                            ": index disagrees with the manifest (run shardpack verify)");
  }
  auto samples = std::make_unique<ShardSamples>();
  samples->Reserve(table.size());
  WdsSampleLocation e;
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string_view ext = ImageExtension(table[i].format);
    const DaliIndexMemberView* image = nullptr;
    for (const DaliIndexMemberView* m = index.begin(i); m != index.end(i); ++m) {
      if (m->ext == ext) image = m;
    }
    if (image == nullptr) return Status::DataLoss(shard.file + ": sample " + table[i].key + " has no image member");
    e.key = table[i].key, e.label = table[i].label, e.format = table[i].format;
    e.offset = image->offset, e.size = image->size, e.json_offset = 0, e.json_size = 0;
    e.fields.clear();
    // The metadata: "meta.json" where the sample's own files include a "json", else "json".
    // Every other member besides the image and the class is one of the sample's fields.
    const DaliIndexMemberView* metadata = nullptr;
    for (const DaliIndexMemberView* m = index.begin(i); m != index.end(i); ++m) {
      if (m->ext == kWdsMetaJsonField || (m->ext == "json" && metadata == nullptr)) metadata = m;
    }
    if (metadata != nullptr) e.json_offset = metadata->offset, e.json_size = metadata->size;
    for (const DaliIndexMemberView* m = index.begin(i); m != index.end(i); ++m) {
      if (m == image || m == metadata || m->ext == "cls") continue;
      SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, m->offset, m->size, shard_bytes));
      e.fields.push_back({std::string(m->ext), m->offset, m->size});
    }
    SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, e.offset, e.size, shard_bytes));
    SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, e.json_offset, e.json_size, shard_bytes));
    samples->Add(e);
  }
  samples->file = std::move(opened.file);
  *loaded = std::move(samples);
  return Status::OK();
}

// A tar shard by path, indexed (IndexWdsShard) and opened.
Status IndexTarShard(Env* env, const std::string& path, std::unique_ptr<ShardSamples>* loaded) {
  std::vector<WdsSampleLocation> entries;
  SHARDPACK_RETURN_IF_ERROR(IndexWdsShard(env, path, &entries));
  auto samples = std::make_unique<ShardSamples>();
  samples->Reserve(entries.size());
  for (const WdsSampleLocation& e : entries) samples->Add(e);
  SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &samples->file));
  *loaded = std::move(samples);
  return Status::OK();
}

// The same, again after the index kept was dropped: it must hold the `expected` samples it held then.
Status IndexTarShardAgain(Env* env, const std::string& path, uint64_t expected, std::unique_ptr<ShardSamples>* loaded) {
  SHARDPACK_RETURN_IF_ERROR(IndexTarShard(env, path, loaded));
  if ((*loaded)->samples.size() == expected) return Status::OK();
  return Status::DataLoss(path + " now holds " + std::to_string((*loaded)->samples.size()) + " samples, not the " +
                          std::to_string(expected) + " it held when it was opened: it changed while being read");
}

}  // namespace

WdsDatasetReader::~WdsDatasetReader() = default;

Status WdsDatasetReader::Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                              uint64_t budget, std::unique_ptr<DatasetReader>* reader) {
  std::unique_ptr<WdsDatasetReader> r(new WdsDatasetReader(std::move(manifest)));
  const ShardTable* shards = &r->manifest().shards;
  r->shards_ = std::make_unique<ShardIndexCache<ShardSamples>>(
      shards->size(), budget, [env, dir, shards](size_t shard, std::unique_ptr<ShardSamples>* loaded) {
        return LoadDatasetShard(env, dir, shards->entry(shard), loaded);
      });
  *reader = std::move(r);
  return Status::OK();
}

Status WdsDatasetReader::OpenShards(Env* env, const std::vector<std::string>& paths, uint64_t budget,
                                    std::unique_ptr<DatasetReader>* reader) {
  Manifest manifest;
  manifest.name =
      paths.size() == 1 ? paths.front() : paths.front() + " (+" + std::to_string(paths.size() - 1) + " shards)";
  manifest.format = DatasetFormat::kWebDataset;
  // Indexed now, for their sample counts: each index is kept (within the bound), so that a shard
  // streamed from a URL is not fetched again to index it when its samples are read.
  std::vector<std::unique_ptr<ShardSamples>> indexed;
  for (const std::string& path : paths) {
    std::unique_ptr<ShardSamples> samples;
    SHARDPACK_RETURN_IF_ERROR(IndexTarShard(env, path, &samples));
    ShardEntry shard;
    shard.file = path;
    shard.samples = samples->samples.size();
    manifest.samples += shard.samples;
    manifest.shards.push_back(std::move(shard));
    indexed.push_back(std::move(samples));
  }
  std::unique_ptr<WdsDatasetReader> r(
      new WdsDatasetReader(std::make_shared<const CompactManifest>(std::move(manifest))));
  const ShardTable* shards = &r->manifest().shards;
  r->shards_ = std::make_unique<ShardIndexCache<ShardSamples>>(
      shards->size(), budget, [env, shards](size_t shard, std::unique_ptr<ShardSamples>* loaded) {
        return IndexTarShardAgain(env, std::string(shards->file(shard)), shards->samples(shard), loaded);
      });
  for (size_t i = 0; i < indexed.size(); ++i) r->shards_->Put(i, std::move(indexed[i]));
  *reader = std::move(r);
  return Status::OK();
}

Status WdsDatasetReader::Find(uint64_t index, std::shared_ptr<const ShardSamples>* shard, size_t* local) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t s = 0;
  uint64_t l = 0;
  locator_.Locate(index, &s, &l);
  *local = size_t(l);
  return shards_->Get(s, shard);
}

Status WdsDatasetReader::Read(uint64_t index, ReadSample* out) const {
  std::shared_ptr<const ShardSamples> shard;
  size_t local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &local));
  const ShardSamples::Sample& e = shard->samples[local];
  out->key = shard->keys[local];
  out->label = e.label;
  out->format = e.format;
  out->encoded.resize(e.size);
  return shard->file->Read(e.offset, e.size, out->encoded.data());
}

Status WdsDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  json->clear();
  std::shared_ptr<const ShardSamples> shard;
  size_t local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &local));
  const ShardSamples::Sample& e = shard->samples[local];
  json->resize(e.json_size);
  return e.json_size == 0 ? Status::OK() : shard->file->Read(e.json_offset, e.json_size, json->data());
}

Status WdsDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  std::shared_ptr<const ShardSamples> shard;
  size_t local = 0;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &local));
  const uint32_t begin = local == 0 ? 0 : shard->samples[local - 1].fields_end;
  for (uint32_t k = begin; k < shard->samples[local].fields_end; ++k) {
    const WdsSampleLocation::Field& f = shard->fields[k];
    if (f.name != name) continue;
    *present = true;
    data->resize(f.size);
    return f.size == 0 ? Status::OK() : shard->file->Read(f.offset, f.size, data->data());
  }
  return Status::OK();
}

}  // namespace shardpack
