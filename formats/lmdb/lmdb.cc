// The LMDB format behind the Format interface: one environment, which verify and stat treat as
// the dataset's only "shard".
#include "formats/lmdb/lmdb.h"

#include "formats/lmdb/lmdb_dataset_reader.h"
#include "formats/lmdb/lmdb_dataset_writer.h"
#include "formats/lmdb/lmdb_format.h"
#include "formats/lmdb/lmdb_input.h"
#include "formats/lmdb/lmdb_verifier.h"
#include "ground/checksum.h"

namespace shardpack {
namespace {

class LmdbFormatImpl final : public Format {
 public:
  DatasetFormat id() const override { return DatasetFormat::kLmdb; }

  Status CheckPackOptions(const PackOptions& options) const override { return RejectPixelOptions(options); }

  // Records carry their image's checksum: hashing here keeps it off the ordered write stage.
  Status PrepareSample(const PackOptions& options, PackItem* item) const override {
    item->bytes_xxh64 = Xxh64(item->bytes);
    return CheckByDecoding(options, item);
  }

  std::unique_ptr<DatasetWriter> NewWriter(Env* env, const std::string& out,
                                           const PackOptions& options) const override {
    return std::make_unique<LmdbDatasetWriter>(env, out, options.sync, kLmdbInitialMapSize);
  }

  Status OpenConvertInput(Env*, const std::string& dir, const Manifest& manifest, uint64_t,
                          std::unique_ptr<PackInput>* input) const override {
    return LmdbInput::Open(dir, manifest.classes, manifest.samples, input);
  }

  Status OpenReader(Env*, const std::string& dir, std::shared_ptr<const CompactManifest> manifest, const RemoteOptions&,
                    std::unique_ptr<DatasetReader>* reader) const override {
    return LmdbDatasetReader::Open(dir, std::move(manifest), reader);
  }

  void VerifyShard(Env* env, const std::string& dir, const Manifest& manifest, size_t shard,
                   const VerifyOptions& options, ShardCheck* check) const override {
    VerifyLmdbDataset(env, dir, manifest, manifest.shards[shard], options, check);
  }

  Status ReadSampleRecords(Env*, const std::string& dir, const ShardEntry&,
                           std::vector<SampleRecord>* records) const override {
    return ReadLmdbSampleRecords(dir, records);
  }

  bool OwnsFile(std::string_view name) const override { return name == kLmdbDataFile || name == kLmdbLockFile; }
  bool reads_shards_through_env() const override { return false; }  // mdb_env_open opens data.mdb
  bool writes_through_env() const override { return false; }
  bool stores_fields() const override { return true; }
  // The environment is one file of a fixed name: nothing to take for an unlisted shard.
  bool LooksLikeShard(std::string_view) const override { return false; }
};

}  // namespace

const Format& LmdbFormat() {
  static const LmdbFormatImpl format;
  return format;
}

}  // namespace shardpack
