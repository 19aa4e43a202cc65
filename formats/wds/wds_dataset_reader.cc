#include "formats/wds/wds_dataset_reader.h"

#include "formats/common/shard_file.h"
#include "formats/wds/dali_index.h"
#include "formats/wds/wds_naming.h"
#include "ground/sample_table.h"
#include "ground/side_file.h"

namespace shardpack {

Status WdsDatasetReader::Open(Env* env, const std::string& dir, Manifest manifest,
                              std::unique_ptr<DatasetReader>* reader) {
  std::unique_ptr<WdsDatasetReader> r(new WdsDatasetReader(std::move(manifest)));
  for (const ShardEntry& shard : r->manifest().shards) {
    OpenedShard opened;
    SHARDPACK_RETURN_IF_ERROR(OpenShardWithTable(env, dir, shard, &opened));
    const std::vector<SampleRecord>& table = opened.table;
    const uint64_t shard_bytes = opened.bytes;
    std::string text;
    std::vector<DaliIndexSample> index;
    SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, shard.index, &text));
    SHARDPACK_RETURN_IF_ERROR(ParseDaliIndex(text, &index));
    if (index.size() != shard.samples) {
      return Status::DataLoss(dir + "/" + shard.index.file +
                              ": index disagrees with the manifest (run shardpack verify)");
    }
    std::vector<WdsSampleLocation> entries;
    entries.reserve(table.size());
    for (size_t i = 0; i < table.size(); ++i) {
      const std::string ext = ImageExtension(table[i].format);
      const DaliIndexMember* image = nullptr;
      for (const DaliIndexMember& m : index[i]) {
        if (m.ext == ext) image = &m;
      }
      if (image == nullptr) return Status::DataLoss(shard.file + ": sample " + table[i].key + " has no image member");
      WdsSampleLocation e{table[i].key, table[i].label, table[i].format, image->offset, image->size, 0, 0, {}};
      // The metadata: "meta.json" where the sample's own files include a "json", else "json".
      // Every other member besides the image and the class is one of the sample's fields.
      const DaliIndexMember* metadata = nullptr;
      for (const DaliIndexMember& m : index[i]) {
        if (m.ext == kWdsMetaJsonField || (m.ext == "json" && metadata == nullptr)) metadata = &m;
      }
      if (metadata != nullptr) e.json_offset = metadata->offset, e.json_size = metadata->size;
      for (const DaliIndexMember& m : index[i]) {
        if (&m == image || &m == metadata || m.ext == "cls") continue;
        SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, m.offset, m.size, shard_bytes));
        e.fields.push_back({m.ext, m.offset, m.size});
      }
      SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, e.offset, e.size, shard_bytes));
      SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard, table[i].key, e.json_offset, e.json_size, shard_bytes));
      entries.push_back(std::move(e));
    }
    r->files_.push_back(std::move(opened.file));
    r->entries_.push_back(std::move(entries));
  }
  *reader = std::move(r);
  return Status::OK();
}

Status WdsDatasetReader::OpenShards(Env* env, const std::vector<std::string>& paths,
                                    std::unique_ptr<DatasetReader>* reader) {
  Manifest manifest;
  manifest.name =
      paths.size() == 1 ? paths.front() : paths.front() + " (+" + std::to_string(paths.size() - 1) + " shards)";
  manifest.format = DatasetFormat::kWebDataset;
  std::vector<std::vector<WdsSampleLocation>> entries(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    SHARDPACK_RETURN_IF_ERROR(IndexWdsShard(env, paths[i], &entries[i]));
    ShardEntry shard;
    shard.file = paths[i];
    shard.samples = entries[i].size();
    manifest.samples += shard.samples;
    manifest.shards.push_back(std::move(shard));
  }
  std::unique_ptr<WdsDatasetReader> r(new WdsDatasetReader(std::move(manifest)));
  for (const std::string& path : paths) {
    std::unique_ptr<RandomAccessFile> file;
    SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &file));
    r->files_.push_back(std::move(file));
  }
  r->entries_ = std::move(entries);
  *reader = std::move(r);
  return Status::OK();
}

const WdsSampleLocation* WdsDatasetReader::Find(uint64_t index, size_t* shard) const {
  uint64_t local;
  locator_.Locate(index, shard, &local);
  return &entries_[*shard][local];
}

Status WdsDatasetReader::Read(uint64_t index, ReadSample* out) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t shard;
  const WdsSampleLocation& e = *Find(index, &shard);
  out->key = e.key;
  out->label = e.label;
  out->format = e.format;
  out->encoded.resize(e.size);
  return files_[shard]->Read(e.offset, e.size, out->encoded.data());
}

Status WdsDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t shard;
  const WdsSampleLocation& e = *Find(index, &shard);
  json->resize(e.json_size);
  return e.json_size == 0 ? Status::OK() : files_[shard]->Read(e.json_offset, e.json_size, json->data());
}

Status WdsDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t shard;
  const WdsSampleLocation& e = *Find(index, &shard);
  for (const WdsSampleLocation::Field& f : e.fields) {
    if (f.name != name) continue;
    *present = true;
    data->resize(f.size);
    return f.size == 0 ? Status::OK() : files_[shard]->Read(f.offset, f.size, data->data());
  }
  return Status::OK();
}

}  // namespace shardpack
