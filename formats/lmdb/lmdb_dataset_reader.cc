#include "formats/lmdb/lmdb_dataset_reader.h"

#include "formats/lmdb/lmdb_format.h"
#include "ground/sample_keys.h"

namespace shardpack {

Status LmdbDatasetReader::Open(const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                               std::unique_ptr<DatasetReader>* reader) {
  std::unique_ptr<LmdbDatasetReader> r(new LmdbDatasetReader(std::move(manifest)));
  SHARDPACK_RETURN_IF_ERROR(LmdbEnvironment::Open(dir, /*read_only=*/true, kLmdbInitialMapSize, &r->lmdb_));
  *reader = std::move(r);
  return Status::OK();
}

Status LmdbDatasetReader::WithRecord(
    uint64_t index, const std::function<Status(std::string_view record, const std::string& key)>& use) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  std::string key = IndexKey(index);
  return lmdb_->Read([&](MDB_txn* txn, MDB_dbi dbi) -> Status {
    MDB_val k{key.size(), key.data()}, v;
    const int rc = mdb_get(txn, dbi, &k, &v);
    if (rc != 0) return LmdbError("cannot read record " + key, rc);
    return use(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size), key);
  });
}

// Parses sample `index`'s record and hands it to `use`, while the record's views are valid.
Status LmdbDatasetReader::WithSample(uint64_t index, const std::function<void(LmdbSample&)>& use) const {
  return WithRecord(index, [&](std::string_view record, const std::string& key) {
    LmdbSample sample;
    SHARDPACK_RETURN_IF_ERROR(ParseLmdbSample(record, key, &sample));
    use(sample);
    return Status::OK();
  });
}

Status LmdbDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  json->clear();
  return WithRecord(index, [&](std::string_view record, const std::string&) {
    nlohmann::json header;
    std::string_view image;
    SHARDPACK_RETURN_IF_ERROR(ParseLmdbRecord(record, &header, &image));
    *json = LmdbRecordMetadata(std::move(header)).dump();
    return Status::OK();
  });
}

Status LmdbDatasetReader::Read(uint64_t index, ReadSample* out) const {
  return WithSample(index, [out](LmdbSample& sample) {
    out->key = std::move(sample.key);
    out->label = sample.label;
    out->format = sample.format;
    out->encoded.assign(sample.image.data(), sample.image.size());
    out->pixels = DecodedImage();
  });
}

Status LmdbDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  return WithSample(index, [&](LmdbSample& sample) {
    for (const LmdbField& f : sample.fields) {
      if (f.name != name) continue;
      data->assign(f.data.data(), f.data.size());
      *present = true;
    }
  });
}

}  // namespace shardpack
