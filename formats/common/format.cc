#include "formats/common/format.h"

namespace shardpack {

Status Format::OpenConvertInput(Env*, const std::string& dir, const Manifest&, uint64_t,
                                std::unique_ptr<PackInput>*) const {
  return Status::Unsupported(dir + " is a '" + std::string(name()) + "' dataset, which convert cannot read");
}

Status Format::OpenForeignInput(Env*, const std::string& path, uint64_t, std::unique_ptr<PackInput>*) const {
  return Status::NotFound(path + " holds no " + std::string(name()) + " files");
}

Status Format::OpenShardList(Env*, const std::vector<std::string>&, const RemoteOptions&,
                             std::unique_ptr<DatasetReader>*) const {
  return Status::Unsupported("format '" + std::string(name()) + "' cannot read shards without a manifest");
}

Status Format::ListShardFiles(Env*, const std::string&, std::vector<std::string>* paths) const {
  paths->clear();
  return Status::OK();
}

Status RejectPixelOptions(const PackOptions& o) {
  if (o.crop_height > 0 || o.crop_width > 0 || o.keep_size || o.resize > 0) {
    return Status::InvalidArgument("--resize, --crop and --keep-size apply to --format raw only");
  }
  if (o.compress != RawCompression::kNone) {
    return Status::InvalidArgument("--compress applies to --format raw only (wds and lmdb keep the encoded images)");
  }
  return Status::OK();
}

Status CheckByDecoding(const PackOptions& options, PackItem* item) {
  if (!options.decode_check) return Status::OK();
  return DecodeImage(item->bytes, options.max_pixels, &item->pixels);
}

Status Format::ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard,
                              std::vector<ShownSize>* sizes) const {
  std::vector<SampleRecord> records;
  SHARDPACK_RETURN_IF_ERROR(ReadSampleRecords(env, dir, shard, &records));
  sizes->clear();
  sizes->reserve(records.size());
  for (const SampleRecord& r : records) sizes->push_back({r.shown_width(), r.shown_height()});
  return Status::OK();
}

Status ReadShardSampleTable(Env* env, const std::string& dir, const ShardEntry& shard,
                            std::vector<SampleRecord>* records) {
  return ReadSampleTable(env, dir, shard, records);
}

ShardOptions ShardOptionsOf(const std::string& out, const PackOptions& options) {
  ShardOptions shards;
  shards.dir = out;
  shards.prefix = options.prefix;
  shards.shard_size_bytes = options.shard_size_bytes;
  shards.samples_per_shard = options.samples_per_shard;
  shards.sync = options.sync;
  shards.original_sizes = options.max_side > 0 || options.lossless_as_jpeg;
  return shards;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace shardpack
