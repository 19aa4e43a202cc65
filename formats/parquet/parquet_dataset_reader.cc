#include "formats/parquet/parquet_dataset_reader.h"

#include "ground/sample_keys.h"

namespace shardpack {

ParquetDatasetReader::ParquetDatasetReader(Env* env, std::shared_ptr<const CompactManifest> manifest,
                                           ParquetDataset dataset)
    : DatasetReader(std::move(manifest)),
      env_(env),
      dataset_(std::move(dataset)),
      locator_(this->manifest().shards),
      paged_(dataset_.shards.size()) {}

Status ParquetDatasetReader::Open(Env* env, const std::string& location,
                                  std::shared_ptr<const CompactManifest> manifest,
                                  std::unique_ptr<DatasetReader>* reader) {
  ParquetDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenParquetDataset(env, location, &dataset));
  // The manifest came from the same footers; files replaced since are caught here.
  bool same = dataset.shards.size() == manifest->shards.size();
  for (size_t i = 0; same && i < dataset.shards.size(); ++i)
    same = dataset.shards[i].rows == manifest->shards.samples(i);
  if (!same) return Status::DataLoss(location + ": its Parquet files changed while they were being opened");
  reader->reset(new ParquetDatasetReader(env, std::move(manifest), std::move(dataset)));
  return Status::OK();
}

Status ParquetDatasetReader::RowGroup(size_t shard, std::shared_ptr<const Kept>* out) const {
  const std::shared_ptr<Kept> kept = kept_.Get(shard);
  std::lock_guard<std::mutex> loading(kept->loading);
  if (!kept->loaded) {
    const ParquetShard& s = dataset_.shards[shard];
    std::unique_ptr<ParquetFile> file;
    Status status = ParquetFile::Open(env_, JoinPath(dataset_.files.base, dataset_.files.names[s.file]), &file);
    if (status.ok()) status = file->ReadRowGroup(s.row_group, /*want_fields=*/dataset_.has_fields, &kept->rows);
    // A failure is not kept: the next read tries again.
    if (!status.ok()) return status.WithMessage(status.message() + "; run shardpack verify " + dataset_.location);
    kept->loaded = true;
  }
  *out = kept;
  return Status::OK();
}

Status ParquetDatasetReader::File(uint32_t file, std::shared_ptr<ParquetFile>* opened) const {
  const std::shared_ptr<OpenFile> kept = open_.Get(file);
  std::lock_guard<std::mutex> loading(kept->loading);
  if (kept->file == nullptr) {
    std::unique_ptr<ParquetFile> made;
    SHARDPACK_RETURN_IF_ERROR(
        ParquetFile::Open(env_, JoinPath(dataset_.files.base, dataset_.files.names[file]), &made));
    kept->file = std::move(made);
  }
  *opened = kept->file;
  return Status::OK();
}

Status ParquetDatasetReader::PagedIndex(size_t shard, std::shared_ptr<const Paged>* out) const {
  std::lock_guard<std::mutex> lock(paged_mu_);
  if (paged_[shard] != nullptr) {
    *out = paged_[shard];
    return Status::OK();
  }
  const ParquetShard& s = dataset_.shards[shard];
  std::shared_ptr<ParquetFile> file;
  SHARDPACK_RETURN_IF_ERROR(File(s.file, &file));
  auto paged = std::make_shared<Paged>();
  paged->by_page = file->ImagePages(s.row_group, &paged->pages);
  if (paged->by_page) {
    const Status read = file->ReadLabels(s.row_group, &paged->labels);
    if (!read.ok()) return read.WithMessage(read.message() + "; run shardpack verify " + dataset_.location);
  }
  paged_[shard] = paged;
  *out = std::move(paged);
  return Status::OK();
}

std::string ParquetDatasetReader::RowName(size_t shard, uint64_t row) const {
  const ParquetShard& s = dataset_.shards[shard];
  return JoinPath(dataset_.files.base, dataset_.files.names[s.file]) + " (row group " + std::to_string(s.row_group) +
         ", row " + std::to_string(row) + ")";
}

Status ParquetDatasetReader::Read(uint64_t index, ReadSample* out) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t shard = 0;
  uint64_t row = 0;
  locator_.Locate(index, &shard, &row);
  std::shared_ptr<const Paged> paged;
  SHARDPACK_RETURN_IF_ERROR(PagedIndex(shard, &paged));
  Status s;
  if (paged->by_page) {
    const ParquetShard& at = dataset_.shards[shard];
    std::shared_ptr<ParquetFile> file;
    SHARDPACK_RETURN_IF_ERROR(File(at.file, &file));
    bool null = false;
    s = file->ReadImageByPage(at.row_group, paged->pages, row, &out->encoded, &null);
    if (!s.ok()) return s.WithMessage(s.message() + "; run shardpack verify " + dataset_.location);
    if (null) s = Status::Corrupt("its image is null");
    if (s.ok() && out->encoded.empty()) s = Status::Corrupt("its image is empty (0 bytes)");
    if (s.ok()) s = paged->labels.Label(row, &out->label);
  } else {
    std::shared_ptr<const Kept> kept;
    SHARDPACK_RETURN_IF_ERROR(RowGroup(shard, &kept));
    std::string_view image;
    s = kept->rows.Image(row, &image);
    if (s.ok()) s = kept->rows.Label(row, &out->label);
    if (s.ok()) out->encoded.assign(image);
  }
  // In a dataset read in place, a sample that cannot be read is damage to its file.
  if (!s.ok()) {
    return Status::DataLoss(RowName(shard, row) + ": " + s.message() + "; run shardpack verify " + dataset_.location);
  }
  out->key = IndexKey(index);
  out->format = SniffImageFormat(out->encoded);
  out->pixels = DecodedImage();
  return Status::OK();
}

Status ParquetDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  bool present = false;
  SHARDPACK_RETURN_IF_ERROR(ReadField(index, "json", json, &present));
  if (!present) json->clear();
  return Status::OK();
}

Status ParquetDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data,
                                       bool* present) const {
  data->clear();
  *present = false;
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  if (name != "json" || !dataset_.has_fields) return Status::OK();
  size_t shard = 0;
  uint64_t row = 0;
  locator_.Locate(index, &shard, &row);
  std::shared_ptr<const Kept> kept;
  SHARDPACK_RETURN_IF_ERROR(RowGroup(shard, &kept));
  *data = kept->rows.Fields(row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  *present = true;
  return Status::OK();
}

}  // namespace shardpack
