// One .parquet file, opened through the Env with Arrow's Parquet library: its footer, the columns
// shardpack takes from it (ParquetLayout), and a row group read into memory (ParquetRows).
//
// Which columns: the Hugging Face `datasets` library records its features in the schema's
// metadata under "huggingface" ({"info": {"features": {"image": {"_type": "Image"}, "label":
// {"_type": "ClassLabel", "names": [...]}}}}); its Image column is struct<bytes: binary, path:
// string>. The image is the first Image feature, else the first such struct column, else the
// first binary column named image, img, jpg, jpeg, png or webp. The label is the first ClassLabel
// (its names are the classes), else an integer column named label, labels, class, cls, target or
// y, else the only integer column. Every other column becomes a field of the sample's JSON.
//
// Arrow's calls throw (parquet::ParquetException) or return arrow::Status: both become a
// shardpack Status naming the file here; nothing Arrow-shaped leaves formats/parquet/.
#pragma once

#include <arrow/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/page_index.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/status.h"

namespace shardpack {

struct ParquetLayout {
  std::string image;                 // a top-level column
  bool image_is_struct = false;      // struct<bytes, path>: the image is its "bytes"
  std::string label;                 // "": none (labels are then -1)
  std::vector<std::string> classes;  // a ClassLabel's names; none for a plain integer label
  std::vector<std::string> fields;   // every other top-level column, in schema order

  bool operator==(const ParquetLayout& o) const {
    return image == o.image && image_is_struct == o.image_is_struct && label == o.label && classes == o.classes &&
           fields == o.fields;
  }
  // "image (struct), label (ClassLabel of 10 names), fields: caption, width" for messages.
  std::string Describe() const;
};

// A row group's samples, what shardpack takes from them (views into the Arrow table it holds).
class ParquetRows {
 public:
  uint64_t size() const { return images_.size(); }
  // Corrupt naming the problem (the caller names the file and the row): a null or empty image.
  Status Image(uint64_t row, std::string_view* bytes) const;
  // -1 for no label (a null, or the -1 `datasets` writes for none); Corrupt for a value outside
  // the class names or int32.
  Status Label(uint64_t row, int32_t* label) const;
  // The field columns of the row as a JSON object (numbers, text, bytes as BytesJson, other types
  // as Arrow prints them); an empty object when the layout has no fields or they were not read.
  nlohmann::json Fields(uint64_t row) const;

 private:
  friend class ParquetFile;
  std::shared_ptr<arrow::Table> table_;  // owns every byte the views below point at
  std::vector<std::string_view> images_;
  std::vector<uint8_t> image_null_;
  std::vector<int64_t> labels_;
  std::vector<uint8_t> label_null_;
  size_t classes_ = 0;  // 0: labels are plain numbers
  std::vector<std::pair<std::string, std::shared_ptr<arrow::ChunkedArray>>> fields_;
};

// Where a row group's images lie page by page, from the file's page index (its OffsetIndex, which
// `datasets` writes and pyarrow writes with write_page_index=True): a row's image is then read
// from its own page (about a megabyte) instead of its row group's whole column (about 100 MB in
// the files `datasets` writes now), which is what makes random access in place cheap.
struct ParquetImagePages {
  int64_t dictionary_offset = -1;  // the column chunk's dictionary page, when it has one
  int64_t dictionary_bytes = 0;
  std::vector<parquet::PageLocation> pages;  // in row order; first_row_index within the row group
  int64_t rows = 0;
  parquet::Compression::type codec = parquet::Compression::UNCOMPRESSED;
};

class ParquetFile {
 public:
  // Reads the footer and chooses the layout. DataLoss naming `path` for a damaged footer or
  // metadata; InvalidArgument when it has no image column (listing its columns).
  static Status Open(Env* env, const std::string& path, std::unique_ptr<ParquetFile>* file);

  const std::string& path() const { return path_; }
  const ParquetLayout& layout() const { return layout_; }
  int row_groups() const;
  uint64_t rows(int row_group) const;
  uint64_t bytes(int row_group) const;  // compressed, as stored
  // Reads row group `i`'s image and label columns, and the fields' when `want_fields`. Page
  // checksums are checked where the writer wrote them. DataLoss naming the file and row group.
  Status ReadRowGroup(int i, bool want_fields, ParquetRows* rows) const;
  // The same, the label column alone (Image() of its rows is then an error): what a row group's
  // rows need besides their images when the images are read page by page.
  Status ReadLabels(int i, ParquetRows* rows) const;

  // Row group `i`'s image pages; false when the file has no usable page index for the image
  // column (then rows are read with ReadRowGroup). Not thread-safe (Arrow's page index reader).
  bool ImagePages(int i, ParquetImagePages* pages);
  // Row `row`'s image, read from its page alone (and the dictionary page, when there is one).
  // Thread-safe. *null: the row has no image. DataLoss naming the file, row group and row.
  Status ReadImageByPage(int i, const ParquetImagePages& pages, uint64_t row, std::string* bytes, bool* null) const;

 private:
  // Reads row group i's columns `names` (top-level) into *rows; `with_image`: its image column is
  // among them.
  Status ReadColumns(int i, const std::vector<std::string>& names, bool with_image, ParquetRows* rows) const;

  std::string path_;
  std::shared_ptr<arrow::io::RandomAccessFile> source_;
  int image_leaf_ = -1;  // the Parquet column (leaf) of the image's bytes
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> schema_;
  ParquetLayout layout_;
};

}  // namespace shardpack
