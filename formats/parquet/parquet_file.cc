#include "formats/parquet/parquet_file.h"

#include <arrow/io/memory.h>
#include <parquet/column_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/properties.h>

#include <cstring>
#include <limits>

#include "formats/common/bytes_json.h"
#include "formats/common/column_names.h"
#include "formats/parquet/env_arrow_file.h"
#include "ground/printable.h"

namespace shardpack {
namespace {

bool IsBinary(const arrow::DataType& type) {
  return type.id() == arrow::Type::BINARY || type.id() == arrow::Type::LARGE_BINARY ||
         type.id() == arrow::Type::BINARY_VIEW;
}

// struct<bytes: binary, ...>, the `datasets` Image column.
bool IsImageStruct(const arrow::DataType& type) {
  if (type.id() != arrow::Type::STRUCT) return false;
  const auto& s = static_cast<const arrow::StructType&>(type);
  const std::shared_ptr<arrow::Field> bytes = s.GetFieldByName("bytes");
  return bytes != nullptr && IsBinary(*bytes->type());
}

// The features of the "huggingface" metadata, or null when there is none. DataLoss when it is
// there but not JSON.
Status HuggingFaceFeatures(const std::shared_ptr<const arrow::KeyValueMetadata>& metadata, const std::string& path,
                           nlohmann::json* features) {
  *features = nullptr;
  if (metadata == nullptr) return Status::OK();
  const int at = metadata->FindKey("huggingface");
  if (at < 0) return Status::OK();
  const nlohmann::json j = nlohmann::json::parse(metadata->value(at), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::DataLoss(path + ": its \"huggingface\" schema metadata is not a JSON object");
  }
  const auto info = j.find("info");
  if (info == j.end() || !info->is_object()) return Status::OK();
  const auto found = info->find("features");
  if (found != info->end() && found->is_object()) *features = *found;
  return Status::OK();
}

std::string FeatureType(const nlohmann::json& features, const std::string& column) {
  if (!features.is_object()) return "";
  const auto f = features.find(column);
  if (f == features.end() || !f->is_object()) return "";
  const auto t = f->find("_type");
  return t != f->end() && t->is_string() ? t->get<std::string>() : "";
}

Status ChooseLayout(const arrow::Schema& schema, const nlohmann::json& features, const std::string& path,
                    ParquetLayout* layout) {
  *layout = ParquetLayout();
  const std::vector<std::shared_ptr<arrow::Field>>& columns = schema.fields();
  for (const auto& c : columns) {
    if (layout->image.empty() && FeatureType(features, c->name()) == "Image") {
      if (!IsImageStruct(*c->type()) && !IsBinary(*c->type())) {
        return Status::InvalidArgument(path + ": its Image column " + Printable(c->name()) + " is of type " +
                                       c->type()->ToString() + ", not struct<bytes: binary, path: string>");
      }
      layout->image = c->name();
    }
  }
  for (const auto& c : columns) {
    if (layout->image.empty() && IsImageStruct(*c->type())) layout->image = c->name();
  }
  for (const auto& c : columns) {
    if (layout->image.empty() && IsBinary(*c->type()) && IsImageColumnName(c->name())) layout->image = c->name();
  }
  if (layout->image.empty()) {
    return Status::InvalidArgument(path + " has no image column (its columns: " + Printable(schema.ToString()) +
                                   "); shardpack takes a Hugging Face Image column, a struct<bytes: binary, ...> "
                                   "column, or a binary column named image, img, jpg, jpeg, png or webp");
  }
  layout->image_is_struct = IsImageStruct(*schema.GetFieldByName(layout->image)->type());
  int named = -1, integers = 0, only = -1;
  for (size_t i = 0; i < columns.size(); ++i) {
    const arrow::Field& c = *columns[i];
    if (c.name() == layout->image) continue;
    if (FeatureType(features, c.name()) == "ClassLabel" && layout->label.empty()) {
      if (!arrow::is_integer(c.type()->id())) {
        return Status::InvalidArgument(path + ": its ClassLabel column " + Printable(c.name()) + " is of type " +
                                       c.type()->ToString() + ", not an integer");
      }
      layout->label = c.name();
      const nlohmann::json& names = features[c.name()].value("names", nlohmann::json());
      if (!names.is_array()) {
        return Status::DataLoss(path + ": its ClassLabel " + Printable(c.name()) + " lists no \"names\"");
      }
      for (const nlohmann::json& n : names) {
        if (!n.is_string()) return Status::DataLoss(path + ": a class name of " + Printable(c.name()) + " is not text");
        layout->classes.push_back(n.get<std::string>());
      }
    }
    if (!arrow::is_integer(c.type()->id())) continue;
    ++integers;
    only = int(i);
    if (named < 0 && IsLabelColumnName(c.name())) named = int(i);
  }
  if (layout->label.empty()) {
    const int chosen = named >= 0 ? named : integers == 1 ? only : -1;
    if (chosen >= 0) layout->label = columns[chosen]->name();
  }
  for (const auto& c : columns) {
    if (c->name() != layout->image && c->name() != layout->label) layout->fields.push_back(c->name());
  }
  return Status::OK();
}

// Arrow's exceptions and statuses as shardpack's, naming the file.
Status FromArrow(const arrow::Status& s, const std::string& where) {
  if (s.ok()) return Status::OK();
  return Status::DataLoss(where + ": " + s.message());
}

// Calls `f`, turning what Arrow's Parquet code throws into DataLoss naming `where`.
template <typename F>
Status Guarded(const std::string& where, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::DataLoss(where + ": " + e.what());
  }
}

// The leaves (Parquet's columns) under the top-level columns `names`; only "bytes" of an image
// struct (its "path" is not needed).
std::vector<int> LeavesOf(const parquet::SchemaDescriptor& schema, const std::vector<std::string>& names,
                          const ParquetLayout& layout) {
  std::vector<int> leaves;
  for (int i = 0; i < schema.num_columns(); ++i) {
    const std::string dotted = schema.Column(i)->path()->ToDotString();
    const std::string top = dotted.substr(0, dotted.find('.'));
    for (const std::string& n : names) {
      if (top != n) continue;
      if (n == layout.image && layout.image_is_struct && dotted != n + ".bytes") continue;
      leaves.push_back(i);
      break;
    }
  }
  return leaves;
}

// Flattens a column's chunks: one call per row, in order.
template <typename F>
void ForEachRow(const arrow::ChunkedArray& column, F f) {
  for (const std::shared_ptr<arrow::Array>& chunk : column.chunks()) {
    for (int64_t i = 0; i < chunk->length(); ++i) f(*chunk, i);
  }
}

std::string_view BinaryAt(const arrow::Array& array, int64_t i) {
  switch (array.type_id()) {
    case arrow::Type::BINARY:
      return static_cast<const arrow::BinaryArray&>(array).GetView(i);
    case arrow::Type::LARGE_BINARY:
      return static_cast<const arrow::LargeBinaryArray&>(array).GetView(i);
    case arrow::Type::BINARY_VIEW:
      return static_cast<const arrow::BinaryViewArray&>(array).GetView(i);
    default:
      return {};
  }
}

int64_t IntegerAt(const arrow::Array& array, int64_t i, bool* too_big) {
  *too_big = false;
  switch (array.type_id()) {
    case arrow::Type::INT8:
      return static_cast<const arrow::Int8Array&>(array).Value(i);
    case arrow::Type::INT16:
      return static_cast<const arrow::Int16Array&>(array).Value(i);
    case arrow::Type::INT32:
      return static_cast<const arrow::Int32Array&>(array).Value(i);
    case arrow::Type::INT64:
      return static_cast<const arrow::Int64Array&>(array).Value(i);
    case arrow::Type::UINT8:
      return static_cast<const arrow::UInt8Array&>(array).Value(i);
    case arrow::Type::UINT16:
      return static_cast<const arrow::UInt16Array&>(array).Value(i);
    case arrow::Type::UINT32:
      return static_cast<const arrow::UInt32Array&>(array).Value(i);
    case arrow::Type::UINT64: {
      const uint64_t v = static_cast<const arrow::UInt64Array&>(array).Value(i);
      *too_big = v > uint64_t(std::numeric_limits<int64_t>::max());
      return int64_t(v);
    }
    default:
      return 0;
  }
}

nlohmann::json ScalarJson(const arrow::Scalar& scalar) {
  if (!scalar.is_valid) return nullptr;
  const arrow::Type::type id = scalar.type->id();
  if (id == arrow::Type::BOOL) return static_cast<const arrow::BooleanScalar&>(scalar).value;
  if (arrow::is_integer(id)) {
    if (id == arrow::Type::UINT64) return static_cast<const arrow::UInt64Scalar&>(scalar).value;
    const auto cast = scalar.CastTo(arrow::int64());
    if (cast.ok()) return static_cast<const arrow::Int64Scalar&>(**cast).value;
  }
  if (id == arrow::Type::FLOAT) return static_cast<const arrow::FloatScalar&>(scalar).value;
  if (id == arrow::Type::DOUBLE) return static_cast<const arrow::DoubleScalar&>(scalar).value;
  if (arrow::is_base_binary_like(id) || id == arrow::Type::STRING_VIEW || id == arrow::Type::BINARY_VIEW) {
    const auto& b = static_cast<const arrow::BaseBinaryScalar&>(scalar);
    return BytesJson(std::string_view(reinterpret_cast<const char*>(b.value->data()), size_t(b.value->size())));
  }
  return scalar.ToString();
}

}  // namespace

std::string ParquetLayout::Describe() const {
  std::string s = image + (image_is_struct ? " (struct)" : " (binary)");
  if (!label.empty()) {
    s += ", label " + label +
         (classes.empty() ? " (integer)" : " (ClassLabel of " + std::to_string(classes.size()) + " names)");
  }
  if (!fields.empty()) {
    s += ", fields:";
    for (const std::string& f : fields) s += " " + f;
  }
  return Printable(s);
}

Status ParquetRows::Image(uint64_t row, std::string_view* bytes) const {
  if (image_null_[row]) return Status::Corrupt("its image is null");
  if (images_[row].empty()) return Status::Corrupt("its image is empty (0 bytes)");
  *bytes = images_[row];
  return Status::OK();
}

Status ParquetRows::Label(uint64_t row, int32_t* label) const {
  *label = -1;
  if (labels_.empty() || label_null_[row]) return Status::OK();
  const int64_t v = labels_[row];
  if (v == -1) return Status::OK();
  if (classes_ > 0 && (v < 0 || uint64_t(v) >= classes_)) {
    return Status::Corrupt("its label " + std::to_string(v) + " is not one of the " + std::to_string(classes_) +
                           " class names (0 to " + std::to_string(classes_ - 1) + ")");
  }
  if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
    return Status::Corrupt("its label " + std::to_string(v) + " is outside 0 to 2147483647");
  }
  *label = int32_t(v);
  return Status::OK();
}

nlohmann::json ParquetRows::Fields(uint64_t row) const {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& [name, column] : fields_) {
    const auto scalar = column->GetScalar(int64_t(row));
    fields[name] = scalar.ok() ? ScalarJson(**scalar) : nlohmann::json(nullptr);
  }
  return fields;
}

Status ParquetFile::Open(Env* env, const std::string& path, std::unique_ptr<ParquetFile>* out) {
  std::shared_ptr<EnvArrowFile> source;
  SHARDPACK_RETURN_IF_ERROR(EnvArrowFile::Open(env, path, &source));
  std::unique_ptr<ParquetFile> file(new ParquetFile());
  file->path_ = path;
  SHARDPACK_RETURN_IF_ERROR(Guarded(path, [&] {
    parquet::ReaderProperties properties(ArrowPool());
    properties.set_page_checksum_verification(true);
    std::unique_ptr<parquet::ParquetFileReader> reader = parquet::ParquetFileReader::Open(source, properties);
    // One thread, no read-ahead: the loader's threads read row groups in parallel themselves.
    parquet::ArrowReaderProperties arrow_properties(/*use_threads=*/false);
    arrow_properties.set_pre_buffer(false);
    auto made = parquet::arrow::FileReader::Make(ArrowPool(), std::move(reader), arrow_properties);
    SHARDPACK_RETURN_IF_ERROR(FromArrow(made.status(), path));
    file->reader_ = std::move(*made);
    return FromArrow(file->reader_->GetSchema(&file->schema_), path);
  }));
  nlohmann::json features;
  SHARDPACK_RETURN_IF_ERROR(HuggingFaceFeatures(file->schema_->metadata(), path, &features));
  SHARDPACK_RETURN_IF_ERROR(ChooseLayout(*file->schema_, features, path, &file->layout_));
  file->source_ = source;
  const std::vector<int> leaves =
      LeavesOf(*file->reader_->parquet_reader()->metadata()->schema(), {file->layout_.image}, file->layout_);
  if (leaves.size() == 1) file->image_leaf_ = leaves[0];
  *out = std::move(file);
  return Status::OK();
}

int ParquetFile::row_groups() const { return reader_->num_row_groups(); }

uint64_t ParquetFile::rows(int row_group) const {
  return uint64_t(reader_->parquet_reader()->metadata()->RowGroup(row_group)->num_rows());
}

uint64_t ParquetFile::bytes(int row_group) const {
  return uint64_t(reader_->parquet_reader()->metadata()->RowGroup(row_group)->total_compressed_size());
}

Status ParquetFile::ReadRowGroup(int i, bool want_fields, ParquetRows* rows) const {
  std::vector<std::string> names = {layout_.image};
  if (!layout_.label.empty()) names.push_back(layout_.label);
  if (want_fields) names.insert(names.end(), layout_.fields.begin(), layout_.fields.end());
  return ReadColumns(i, names, /*with_image=*/true, rows);
}

Status ParquetFile::ReadLabels(int i, ParquetRows* rows) const {
  if (layout_.label.empty()) {
    *rows = ParquetRows();
    rows->images_.assign(this->rows(i), std::string_view());
    rows->image_null_.assign(this->rows(i), 1);
    return Status::OK();
  }
  return ReadColumns(i, {layout_.label}, /*with_image=*/false, rows);
}

Status ParquetFile::ReadColumns(int i, const std::vector<std::string>& names, bool with_image,
                                ParquetRows* rows) const {
  *rows = ParquetRows();
  const std::string where = path_ + " (row group " + std::to_string(i) + ")";
  const parquet::SchemaDescriptor& schema = *reader_->parquet_reader()->metadata()->schema();
  SHARDPACK_RETURN_IF_ERROR(Guarded(where, [&] {
    auto table = reader_->ReadRowGroup(i, LeavesOf(schema, names, layout_));
    SHARDPACK_RETURN_IF_ERROR(FromArrow(table.status(), where));
    rows->table_ = std::move(*table);
    return Status::OK();
  }));
  const arrow::Table& table = *rows->table_;
  const uint64_t n = rows->table_->num_rows();
  if (n != this->rows(i)) {
    return Status::DataLoss(where + ": it holds " + std::to_string(n) + " rows, its footer says " +
                            std::to_string(this->rows(i)));
  }
  rows->images_.reserve(n);
  rows->image_null_.reserve(n);
  if (!with_image) {
    rows->images_.assign(n, std::string_view());
    rows->image_null_.assign(n, 1);
  } else {
    const std::shared_ptr<arrow::ChunkedArray> image = table.GetColumnByName(layout_.image);
    if (image == nullptr) return Status::DataLoss(where + ": its image column " + layout_.image + " was not read");
    ForEachRow(*image, [&](const arrow::Array& chunk, int64_t r) {
      const arrow::Array* bytes = &chunk;
      bool null = chunk.IsNull(r);
      if (layout_.image_is_struct) {
        bytes = static_cast<const arrow::StructArray&>(chunk).GetFieldByName("bytes").get();
        null = null || bytes == nullptr || bytes->IsNull(r);
      }
      rows->images_.push_back(null ? std::string_view() : BinaryAt(*bytes, r));
      rows->image_null_.push_back(null);
    });
  }
  if (!layout_.label.empty()) {
    const std::shared_ptr<arrow::ChunkedArray> label = table.GetColumnByName(layout_.label);
    if (label == nullptr) return Status::DataLoss(where + ": its label column " + layout_.label + " was not read");
    rows->classes_ = layout_.classes.size();
    ForEachRow(*label, [&](const arrow::Array& chunk, int64_t r) {
      bool too_big = false;
      const int64_t v = chunk.IsNull(r) ? -1 : IntegerAt(chunk, r, &too_big);
      rows->labels_.push_back(too_big ? std::numeric_limits<int64_t>::max() : v);
      rows->label_null_.push_back(chunk.IsNull(r));
    });
  }
  for (const std::string& f : layout_.fields) {
    const std::shared_ptr<arrow::ChunkedArray> column = table.GetColumnByName(f);
    if (column != nullptr) rows->fields_.emplace_back(f, column);
  }
  if (rows->images_.size() != n || (!layout_.label.empty() && rows->labels_.size() != n)) {
    return Status::DataLoss(where + ": its columns hold different numbers of rows");
  }
  return Status::OK();
}

bool ParquetFile::ImagePages(int i, ParquetImagePages* pages) {
  *pages = ParquetImagePages();
  if (image_leaf_ < 0) return false;
  try {
    const std::shared_ptr<parquet::FileMetaData> metadata = reader_->parquet_reader()->metadata();
    if (metadata->schema()->Column(image_leaf_)->physical_type() != parquet::Type::BYTE_ARRAY) return false;
    const std::unique_ptr<parquet::ColumnChunkMetaData> chunk = metadata->RowGroup(i)->ColumnChunk(image_leaf_);
    const std::shared_ptr<parquet::PageIndexReader> index = reader_->parquet_reader()->GetPageIndexReader();
    if (index == nullptr) return false;
    const std::shared_ptr<parquet::RowGroupPageIndexReader> group = index->RowGroup(i);
    if (group == nullptr) return false;
    const std::shared_ptr<parquet::OffsetIndex> offsets = group->GetOffsetIndex(image_leaf_);
    if (offsets == nullptr || offsets->page_locations().empty()) return false;
    pages->pages = offsets->page_locations();
    pages->rows = int64_t(rows(i));
    pages->codec = chunk->compression();
    if (chunk->has_dictionary_page()) {
      pages->dictionary_offset = chunk->dictionary_page_offset();
      pages->dictionary_bytes = pages->pages.front().offset - pages->dictionary_offset;
    }
  } catch (const std::exception&) {
    return false;  // an unreadable page index: the row group is read whole, and reports what is wrong
  }
  // What is trusted below: pages in order within the file and the row group, the dictionary before
  // them. Anything else is read the whole-row-group way.
  const uint64_t size = uint64_t(*source_->GetSize());
  if (pages->dictionary_offset >= 0 && (pages->dictionary_bytes <= 0 || pages->dictionary_bytes > (int64_t(1) << 30))) {
    return false;
  }
  for (size_t k = 0; k < pages->pages.size(); ++k) {
    const parquet::PageLocation& p = pages->pages[k];
    const int64_t next_row = k + 1 < pages->pages.size() ? pages->pages[k + 1].first_row_index : pages->rows;
    if (p.offset < 0 || p.compressed_page_size <= 0 || uint64_t(p.offset) + uint64_t(p.compressed_page_size) > size ||
        p.first_row_index < 0 || next_row <= p.first_row_index || (k == 0 && p.first_row_index != 0)) {
      return false;
    }
  }
  return true;
}

Status ParquetFile::ReadImageByPage(int i, const ParquetImagePages& pages, uint64_t row, std::string* bytes,
                                    bool* null) const {
  // Named only when something is wrong: this runs once per sample the loader reads.
  const auto where = [&] { return path_ + " (row group " + std::to_string(i) + ", row " + std::to_string(row) + ")"; };
  // The last page whose first row is at or before `row`.
  size_t k = pages.pages.size() - 1;
  while (k > 0 && uint64_t(pages.pages[k].first_row_index) > row) --k;
  const parquet::PageLocation& page = pages.pages[k];
  const int64_t end_row = k + 1 < pages.pages.size() ? pages.pages[k + 1].first_row_index : pages.rows;
  // The page's bytes (a view of the mapped file), after the dictionary page's when there is one.
  std::shared_ptr<arrow::Buffer> stored;
  auto read = source_->ReadAt(page.offset, page.compressed_page_size);
  if (!read.ok() || (*read)->size() != page.compressed_page_size) {
    return Status::DataLoss(where() + ": its page could not be read");
  }
  stored = std::move(*read);
  if (pages.dictionary_offset >= 0) {
    std::string both(size_t(pages.dictionary_bytes + page.compressed_page_size), '\0');
    auto dictionary = source_->ReadAt(pages.dictionary_offset, pages.dictionary_bytes, both.data());
    if (!dictionary.ok() || *dictionary != pages.dictionary_bytes) {
      return Status::DataLoss(where() + ": its dictionary page could not be read");
    }
    std::memcpy(both.data() + pages.dictionary_bytes, stored->data(), size_t(page.compressed_page_size));
    stored = arrow::Buffer::FromString(std::move(both));
  }
  try {
    parquet::ReaderProperties properties(ArrowPool());
    properties.set_page_checksum_verification(true);
    const parquet::ColumnDescriptor* column = reader_->parquet_reader()->metadata()->schema()->Column(image_leaf_);
    auto stream = std::make_shared<arrow::io::BufferReader>(std::move(stored));
    std::unique_ptr<parquet::PageReader> pager =
        parquet::PageReader::Open(stream, end_row - page.first_row_index, pages.codec, properties, *column);
    const std::shared_ptr<parquet::ColumnReader> reader =
        parquet::ColumnReader::Make(column, std::move(pager), ArrowPool());
    auto* values = static_cast<parquet::ByteArrayReader*>(reader.get());
    const int64_t skip = int64_t(row) - page.first_row_index;
    if (skip > 0 && values->Skip(skip) != skip)
      return Status::DataLoss(where() + ": its page holds fewer rows than its index says");
    int16_t definition = 0;
    parquet::ByteArray value;
    int64_t values_read = 0;
    if (values->ReadBatch(1, &definition, nullptr, &value, &values_read) != 1) {
      return Status::DataLoss(where() + ": its page holds fewer rows than its index says");
    }
    *null = values_read == 0;
    if (*null)
      bytes->clear();
    else
      bytes->assign(reinterpret_cast<const char*>(value.ptr), value.len);
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::DataLoss(where() + ": " + e.what());
  }
}

}  // namespace shardpack
