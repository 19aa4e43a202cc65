#include "formats/parquet/parquet_input.h"

#include "ground/sample_keys.h"

namespace shardpack {

Status ParquetInput::Open(Env* env, const std::string& location, uint64_t max_member_bytes,
                          std::unique_ptr<PackInput>* input) {
  ParquetDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenParquetDataset(env, location, &dataset));
  input->reset(new ParquetInput(env, std::move(dataset), max_member_bytes));
  return Status::OK();
}

std::string ParquetInput::Where(const ParquetShard& shard) const {
  return JoinPath(dataset_.files.base, dataset_.files.names[shard.file]) + " (row group " +
         std::to_string(shard.row_group) + ")";
}

Status ParquetInput::Next(PackItem* item, bool* done) {
  *done = false;
  item->status = Status::OK();
  item->loaded = true;
  item->bytes.clear();
  item->fields.clear();
  item->field_relpaths.clear();
  item->extra = nullptr;
  item->label = -1;
  while (shard_ < dataset_.shards.size()) {
    const ParquetShard& shard = dataset_.shards[shard_];
    if (!loaded_) {
      std::unique_ptr<ParquetFile> file;
      Status s = ParquetFile::Open(env_, JoinPath(dataset_.files.base, dataset_.files.names[shard.file]), &file);
      if (s.ok()) s = file->ReadRowGroup(shard.row_group, /*want_fields=*/dataset_.has_fields, &rows_);
      if (!s.ok()) {
        // The whole row group: one line, and its samples' places stay theirs (keys do not shift).
        item->relpath = Where(shard);
        item->status = s.WithMessage(s.message() + "; its " + std::to_string(shard.rows) + " samples are skipped");
        position_ += shard.rows;
        ++shard_;
        return Status::OK();
      }
      loaded_ = true;
      row_ = 0;
    }
    if (row_ == shard.rows) {
      loaded_ = false;
      rows_ = ParquetRows();
      ++shard_;
      continue;
    }
    item->relpath = JoinPath(dataset_.files.base, dataset_.files.names[shard.file]) + " (row group " +
                    std::to_string(shard.row_group) + ", row " + std::to_string(row_) + ")";
    item->key = IndexKey(position_);
    Emit(row_, item);
    ++row_;
    ++position_;
    return Status::OK();
  }
  *done = true;
  return Status::OK();
}

void ParquetInput::Emit(uint64_t row, PackItem* item) {
  std::string_view image;
  item->status = rows_.Image(row, &image);
  if (item->status.ok()) item->status = rows_.Label(row, &item->label);
  if (item->status.ok() && image.size() > max_member_bytes_) {
    item->status = Status::Corrupt("its image of " + std::to_string(image.size()) + " bytes is over the bound of " +
                                   std::to_string(max_member_bytes_));
  }
  if (!item->status.ok()) return;
  item->bytes.assign(image);
  if (!dataset_.has_fields) return;
  nlohmann::json fields = rows_.Fields(row);
  if (keep_fields_) {
    item->fields.push_back({"json", fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  } else {
    item->extra = {{"parquet", std::move(fields)}};
  }
}

}  // namespace shardpack
