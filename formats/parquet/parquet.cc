#include "formats/parquet/parquet.h"

#include "formats/parquet/parquet_dataset.h"
#include "formats/parquet/parquet_dataset_reader.h"
#include "formats/parquet/parquet_file.h"
#include "formats/parquet/parquet_input.h"
#include "ground/sample_keys.h"

namespace shardpack {
namespace {

// The file and row group a manifest's shard names, opened. NotFound for a name this format did not
// make.
Status OpenShard(Env* env, const std::string& location, const std::string& name, std::unique_ptr<ParquetFile>* file,
                 int* row_group) {
  std::string relative;
  if (!ParseParquetShardName(name, &relative, row_group)) {
    return Status::NotFound(name + " is not a Parquet row group's name (file#row_group)");
  }
  SHARDPACK_RETURN_IF_ERROR(ParquetFile::Open(env, JoinPath(ParquetBaseOf(env, location), relative), file));
  if (*row_group >= (*file)->row_groups()) {
    return Status::DataLoss((*file)->path() + " has " + std::to_string((*file)->row_groups()) + " row groups, not " +
                            std::to_string(*row_group + 1) + ": it changed since it was opened");
  }
  return Status::OK();
}

// What is not the file of a row group: "data/train-00000-of-00002.parquet (row group 3)".
std::string RowGroupName(const std::string& shard_name) {
  std::string file;
  int row_group = 0;
  if (!ParseParquetShardName(shard_name, &file, &row_group)) return shard_name;
  return file + " (row group " + std::to_string(row_group) + ")";
}

class ParquetFormatImpl final : public ReadOnlyFormat {
 public:
  DatasetFormat id() const override { return DatasetFormat::kParquet; }

  Status OpenConvertInput(Env* env, const std::string& location, const Manifest&, uint64_t max_member_bytes,
                          std::unique_ptr<PackInput>* input) const override {
    return ParquetInput::Open(env, location, max_member_bytes, input);
  }

  Status OpenReader(Env* env, const std::string& location, std::shared_ptr<const CompactManifest> manifest,
                    const RemoteOptions&, std::unique_ptr<DatasetReader>* reader) const override {
    return ParquetDatasetReader::Open(env, location, std::move(manifest), reader);
  }

  void VerifyShard(Env* env, const std::string& location, const Manifest& manifest, size_t shard,
                   const VerifyOptions& options, ShardCheck* check) const override {
    const ShardEntry& entry = manifest.shards[shard];
    const std::string name = RowGroupName(entry.file);
    std::unique_ptr<ParquetFile> file;
    int row_group = 0;
    ParquetRows rows;
    Status s = OpenShard(env, location, entry.file, &file, &row_group);
    if (s.ok()) s = file->ReadRowGroup(row_group, /*want_fields=*/true, &rows);
    if (!s.ok()) {
      check->AddProblem(name, "", s.message());
      return;
    }
    check->bytes = entry.bytes;
    uint64_t first = 0;  // the shard's first sample's place: its key's number
    for (size_t i = 0; i < shard; ++i) first += manifest.shards[i].samples;
    for (uint64_t r = 0; r < rows.size(); ++r) {
      std::string_view image;
      int32_t label = -1;
      s = rows.Image(r, &image);
      if (s.ok()) s = rows.Label(r, &label);
      if (s.ok()) {
        ImageInfo info;
        s = ProbeImage(image, &info);
      }
      if (s.ok() && options.decode) {
        DecodedImage pixels;
        s = DecodeImage(image, options.max_pixels, &pixels);
        if (s.ok()) ++check->images_decoded;
      }
      ++check->samples;
      if (!s.ok()) check->AddProblem(name, IndexKey(first + r), "row " + std::to_string(r) + ": " + s.message());
    }
  }

  Status ReadSampleRecords(Env* env, const std::string& location, const ShardEntry& entry,
                           std::vector<SampleRecord>* records) const override {
    std::unique_ptr<ParquetFile> file;
    int row_group = 0;
    ParquetRows rows;
    SHARDPACK_RETURN_IF_ERROR(OpenShard(env, location, entry.file, &file, &row_group));
    SHARDPACK_RETURN_IF_ERROR(file->ReadRowGroup(row_group, /*want_fields=*/false, &rows));
    records->clear();
    for (uint64_t r = 0; r < rows.size(); ++r) {
      std::string_view image;
      SampleRecord record;
      const std::string where =
          file->path() + " (row group " + std::to_string(row_group) + ", row " + std::to_string(r) + "): ";
      SHARDPACK_RETURN_IF_ERROR(rows.Image(r, &image).WithPrefix(where));
      SHARDPACK_RETURN_IF_ERROR(rows.Label(r, &record.label).WithPrefix(where));
      record.size = image.size();
      ImageInfo info;
      if (ProbeImage(image, &info).ok()) {
        record.format = info.format;
        record.width = info.width;
        record.height = info.height;
        if (info.format == ImageFormat::kJpeg) record.orientation = uint8_t(JpegExifOrientation(image));
      }
      records->push_back(std::move(record));
    }
    return Status::OK();
  }

  // Its shards are row groups, not files: no file is an unlisted shard.
  bool LooksLikeShard(std::string_view) const override { return false; }
};

}  // namespace

const Format& ParquetFormat() {
  static const ParquetFormatImpl format;
  return format;
}

Status OpenParquetManifest(Env* env, const std::string& location, Manifest* manifest, const Format** format) {
  ParquetDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenParquetDataset(env, location, &dataset));
  *manifest = ParquetManifest(dataset);
  *format = &ParquetFormat();
  return Status::OK();
}

}  // namespace shardpack
