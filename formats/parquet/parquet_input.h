// ParquetInput: a Parquet dataset as convert's input. Row groups are read in order, their rows in
// order; a sample keeps its place as its key (IndexKey, as the in-place reader names it), so that a
// converted dataset and the Parquet files agree key for key. A ClassLabel's names become the
// classes. A damaged sample is skipped and reported naming the file, row group and row; a file or
// row group that cannot be read is skipped whole with one line (its samples' places stay theirs).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/pack_input.h"
#include "formats/parquet/parquet_dataset.h"
#include "formats/parquet/parquet_file.h"
#include "shardpack/env.h"

namespace shardpack {

class ParquetInput final : public PackInput {
 public:
  static Status Open(Env* env, const std::string& location, uint64_t max_member_bytes,
                     std::unique_ptr<PackInput>* input);

  const std::vector<std::string>& class_names() const override { return dataset_.classes; }
  uint64_t expected() const override { return dataset_.samples; }
  void KeepFields(bool keep) override { keep_fields_ = keep; }
  Status Next(PackItem* item, bool* done) override;

 private:
  ParquetInput(Env* env, ParquetDataset dataset, uint64_t max_member_bytes)
      : env_(env), dataset_(std::move(dataset)), max_member_bytes_(max_member_bytes) {}
  std::string Where(const ParquetShard& shard) const;
  void Emit(uint64_t row, PackItem* item);

  Env* env_;
  ParquetDataset dataset_;
  uint64_t max_member_bytes_;
  bool keep_fields_ = false;
  size_t shard_ = 0;     // the row group being read
  bool loaded_ = false;  // rows_ holds it
  ParquetRows rows_;
  uint64_t row_ = 0;       // its next row
  uint64_t position_ = 0;  // the next sample's place in the dataset
};

}  // namespace shardpack
