#include "formats/mds/mds_dataset_reader.h"

#include "formats/mds/mds_shard_file.h"
#include "ground/little_endian.h"
#include "ground/sample_keys.h"

namespace shardpack {
MdsDatasetReader::MdsDatasetReader(Env* env, std::shared_ptr<const CompactManifest> manifest, MdsDataset dataset)
    : DatasetReader(std::move(manifest)),
      env_(env),
      dataset_(std::move(dataset)),
      locator_(this->manifest().shards),
      files_(dataset_.index.shards.size()) {}

Status MdsDatasetReader::Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                              std::unique_ptr<DatasetReader>* reader) {
  MdsDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenMdsDataset(env, dir, &dataset));
  // The manifest came from the same index.json; a writer that replaced it since is caught here.
  bool same = dataset.index.shards.size() == manifest->shards.size();
  for (size_t i = 0; same && i < dataset.index.shards.size(); ++i) {
    same = dataset.index.shards[i].samples == manifest->shards.samples(i);
  }
  if (!same) return Status::DataLoss(JoinPath(dir, kMdsIndexFileName) + " changed while it was being opened");
  reader->reset(new MdsDatasetReader(env, std::move(manifest), std::move(dataset)));
  return Status::OK();
}

Status MdsDatasetReader::OpenShardFile(size_t shard, std::shared_ptr<RandomAccessFile>* file) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    *file = files_[shard];
  }
  if (*file != nullptr) return Status::OK();
  const MdsShardInfo& info = dataset_.index.shards[shard];
  const std::string path = JoinPath(dataset_.dir, info.raw.basename);
  std::unique_ptr<RandomAccessFile> opened;
  SHARDPACK_RETURN_IF_ERROR(env_->NewRandomAccessFile(path, &opened));
  uint64_t size = 0;
  SHARDPACK_RETURN_IF_ERROR(opened->Size(&size));
  if (size != info.raw.bytes) {
    return Status::DataLoss(path + " is " + std::to_string(size) + " bytes, index.json says " +
                            std::to_string(info.raw.bytes) + "; run shardpack verify " + dataset_.dir);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (files_[shard] == nullptr) files_[shard] = std::move(opened);
  *file = files_[shard];
  return Status::OK();
}

Status MdsDatasetReader::DecompressedShard(size_t shard, std::shared_ptr<const Kept>* out) const {
  const std::shared_ptr<Kept> kept = kept_.Get(shard);
  std::lock_guard<std::mutex> loading(kept->loading);
  if (kept->raw == nullptr && kept->status.ok()) {
    auto bytes = std::make_shared<std::string>();
    kept->status = ReadMdsShard(env_, dataset_.dir, dataset_.index.shards[shard], bytes.get());
    if (kept->status.ok()) {
      kept->status = MdsShardView::Open(*bytes, dataset_.index.shards[shard].samples,
                                        JoinPath(dataset_.dir, dataset_.index.shards[shard].zip.basename), &kept->view);
    }
    if (kept->status.ok()) kept->raw = std::move(bytes);
  }
  *out = kept;
  Status s = kept->status;
  kept->status = Status::OK();  // a failure is not kept: the next read tries again
  return s;
}

Status MdsDatasetReader::SampleBytes(size_t shard, uint64_t local, std::string* bytes) const {
  const MdsShardInfo& info = dataset_.index.shards[shard];
  if (info.compressed) {
    std::shared_ptr<const Kept> kept;
    SHARDPACK_RETURN_IF_ERROR(DecompressedShard(shard, &kept));
    bytes->assign(kept->view.sample(local));  // its header was checked when it was decompressed
    return Status::OK();
  }
  std::shared_ptr<RandomAccessFile> file;
  SHARDPACK_RETURN_IF_ERROR(OpenShardFile(shard, &file));
  char pair[8];
  SHARDPACK_RETURN_IF_ERROR(file->Read(4 * (local + 1), sizeof(pair), pair));
  const uint32_t begin = LoadLe32(pair), end = LoadLe32(pair + 4);
  if (!MdsSampleRangeValid(begin, end, info.samples, info.raw.bytes)) {
    return Status::DataLoss(JoinPath(dataset_.dir, MdsSampleName(info, local)) + ": its offsets " +
                            std::to_string(begin) + " to " + std::to_string(end) +
                            " are outside the shard's samples; run shardpack verify " + dataset_.dir);
  }
  bytes->resize(end - begin);
  return file->Read(begin, end - begin, bytes->data());
}

Status MdsDatasetReader::Decode(uint64_t index, bool want_fields, MdsDecoded* out, std::string* bytes) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t shard = 0;
  uint64_t local = 0;
  locator_.Locate(index, &shard, &local);
  SHARDPACK_RETURN_IF_ERROR(SampleBytes(shard, local, bytes));
  // The loader bounds pixels itself when it decodes; a pil image's pixels are bounded by its shard.
  const Status s = DecodeMdsSampleBytes(dataset_, *bytes, want_fields, kMaxMdsShardBytes, out);
  if (s.ok()) return s;
  // In a dataset read in place, a sample that does not decode is damage to its file.
  return Status::DataLoss(JoinPath(dataset_.dir, MdsSampleName(dataset_.index.shards[shard], local)) + ": " +
                          s.message() + "; run shardpack verify " + dataset_.dir);
}

Status MdsDatasetReader::Read(uint64_t index, ReadSample* out) const {
  std::string bytes;
  MdsDecoded decoded;
  SHARDPACK_RETURN_IF_ERROR(Decode(index, /*want_fields=*/false, &decoded, &bytes));
  out->key = IndexKey(index);
  out->label = decoded.label;
  if (dataset_.layout.image_is_pil) {
    out->encoded.clear();
    out->format = ImageFormat::kUnknown;
    out->pixels = std::move(decoded.pixels);
  } else {
    out->encoded.assign(decoded.encoded);
    out->format = SniffImageFormat(out->encoded);
    out->pixels = DecodedImage();
  }
  return Status::OK();
}

Status MdsDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  bool present = false;
  SHARDPACK_RETURN_IF_ERROR(ReadField(index, "json", json, &present));
  if (!present) json->clear();
  return Status::OK();
}

Status MdsDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  if (name != "json" || dataset_.layout.fields.empty()) return Status::OK();
  std::string bytes;
  MdsDecoded decoded;
  SHARDPACK_RETURN_IF_ERROR(Decode(index, /*want_fields=*/true, &decoded, &bytes));
  *data = decoded.fields.dump();
  *present = true;
  return Status::OK();
}

}  // namespace shardpack
