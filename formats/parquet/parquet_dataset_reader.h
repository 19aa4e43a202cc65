// Random access to a Parquet dataset in place (shardpack.open, the loader). Where a file has a page
// index (`datasets` writes one), a sample's image is read from its own page: a random read of about
// a megabyte, as a packed shard's sample is one read. A row group's labels and page locations are
// read once, when one of its samples is first asked for, and kept (they grow with the row groups
// touched: bytes a row). Without a page index, a sample's row group is read whole (Parquet
// compresses a column chunk as a unit) and kept, a few at a time (kParquetRowGroupsKept, least
// recently used dropped), which suits reading a row group's samples together (shuffle_buffer) far
// better than a global shuffle; the fields' JSON is always read that way.
//
// Keys are the samples' places in the dataset (IndexKey: 000000000, ...), which convert gives them
// too. Labels: a ClassLabel's (the manifest's classes are its names) or an integer column's.
// Fields: "json", the columns besides the image and the label.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "formats/common/kept_shards.h"
#include "formats/common/shard_locator.h"
#include "formats/parquet/parquet_dataset.h"
#include "formats/parquet/parquet_file.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

inline constexpr size_t kParquetRowGroupsKept = 8;
inline constexpr size_t kParquetFilesOpen = 64;  // files kept open (their footers parsed), least recently used closed

class ParquetDatasetReader final : public DatasetReader {
 public:
  // `manifest`: ParquetManifest of the dataset at `location`, whose footers are read again here.
  static Status Open(Env* env, const std::string& location, std::shared_ptr<const CompactManifest> manifest,
                     std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;

 private:
  ParquetDatasetReader(Env* env, std::shared_ptr<const CompactManifest> manifest, ParquetDataset dataset);
  struct Kept {
    std::mutex loading;
    bool loaded = false;
    ParquetRows rows;  // with the fields' columns when the dataset has fields
  };
  // Shard `shard`'s rows (read now, or kept from before).
  Status RowGroup(size_t shard, std::shared_ptr<const Kept>* kept) const;
  // What reading a shard's rows one by one needs: its image pages and its labels.
  struct Paged {
    bool by_page = false;  // false: the file has no usable page index; read the row group whole
    ParquetImagePages pages;
    ParquetRows labels;
  };
  Status PagedIndex(size_t shard, std::shared_ptr<const Paged>* paged) const;
  // File `file` of the dataset, opened (or kept open from before).
  Status File(uint32_t file, std::shared_ptr<ParquetFile>* opened) const;
  // "FILE (row group G, row R)", for messages.
  std::string RowName(size_t shard, uint64_t row) const;

  Env* env_;
  ParquetDataset dataset_;
  ShardLocator locator_;
  mutable KeptShards<Kept> kept_{kParquetRowGroupsKept};
  struct OpenFile {
    std::mutex loading;
    std::shared_ptr<ParquetFile> file;  // null until opened
  };
  mutable KeptShards<OpenFile> open_{kParquetFilesOpen};  // by file
  mutable std::mutex paged_mu_;  // making a shard's Paged (Arrow's page index reader is not thread-safe)
  mutable std::vector<std::shared_ptr<const Paged>> paged_;  // by shard; null until first used
};

}  // namespace shardpack
