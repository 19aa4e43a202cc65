// The WebDataset format behind the Format interface: the pieces in this folder, wired together.
#include "formats/wds/wds.h"

#include <algorithm>

#include "formats/wds/wds_dataset_reader.h"
#include "formats/wds/wds_dataset_writer.h"
#include "formats/wds/wds_input.h"
#include "formats/wds/wds_verifier.h"

namespace shardpack {
namespace {

// Shards from any tool: plain or gzip-compressed tar files (not hidden ones).
bool IsForeignShardName(const std::string& name) {
  return name[0] != '.' && (EndsWith(name, ".tar") || EndsWith(name, ".tar.gz") || EndsWith(name, ".tgz"));
}

class WdsFormatImpl final : public Format {
 public:
  DatasetFormat id() const override { return DatasetFormat::kWebDataset; }

  Status CheckPackOptions(const PackOptions& options) const override { return RejectPixelOptions(options); }

  Status PrepareSample(const PackOptions& options, PackItem* item) const override {
    return CheckByDecoding(options, item);
  }

  std::unique_ptr<DatasetWriter> NewWriter(Env* env, const std::string& out,
                                           const PackOptions& options) const override {
    return std::make_unique<WdsDatasetWriter>(env, ShardOptionsOf(out, options));
  }

  Status OpenConvertInput(Env* env, const std::string& dir, const Manifest& manifest, uint64_t max_member_bytes,
                          std::unique_ptr<PackInput>* input) const override {
    std::vector<std::string> shards;
    for (const ShardEntry& e : manifest.shards) shards.push_back(JoinPath(dir, e.file));
    *input = std::make_unique<WdsInput>(env, shards, manifest.classes, manifest.samples, /*own_format=*/true,
                                        max_member_bytes);
    return Status::OK();
  }

  // A single shard file, or a folder of them (sorted by name).
  Status OpenForeignInput(Env* env, const std::string& path, uint64_t max_member_bytes,
                          std::unique_ptr<PackInput>* input) const override {
    std::vector<std::string> shards;
    if (!ListShardFiles(env, path, &shards).ok()) {  // a single shard file
      if (!env->FileExists(path)) return Status::NotFound("input " + path + " does not exist");
      shards.push_back(path);
    } else {
      if (shards.empty()) {
        return Status::NotFound(path + " holds neither a manifest.json nor .tar/.tar.gz shards; nothing to convert");
      }
    }
    *input =
        std::make_unique<WdsInput>(env, shards, std::vector<std::string>{}, 0, /*own_format=*/false, max_member_bytes);
    return Status::OK();
  }

  Status OpenReader(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                    const RemoteOptions& options, std::unique_ptr<DatasetReader>* reader) const override {
    return WdsDatasetReader::Open(env, dir, std::move(manifest), IndexMemory(options), reader);
  }

  Status OpenShardList(Env* env, const std::vector<std::string>& paths, const RemoteOptions& options,
                       std::unique_ptr<DatasetReader>* reader) const override {
    return WdsDatasetReader::OpenShards(env, paths, IndexMemory(options), reader);
  }
  bool reads_shard_lists() const override { return true; }
  // IOError when `dir` is no folder.
  Status ListShardFiles(Env* env, const std::string& dir, std::vector<std::string>* paths) const override {
    paths->clear();
    std::vector<DirEntry> entries;
    SHARDPACK_RETURN_IF_ERROR(env->ListDir(dir, &entries));
    for (const DirEntry& e : entries) {
      if (e.type == DirEntry::Type::kFile && IsForeignShardName(e.name)) paths->push_back(JoinPath(dir, e.name));
    }
    std::sort(paths->begin(), paths->end());
    return Status::OK();
  }
  bool stores_fields() const override { return true; }

  void VerifyShard(Env* env, const std::string& dir, const Manifest& manifest, size_t shard,
                   const VerifyOptions& options, ShardCheck* check) const override {
    VerifyWdsShard(env, dir, manifest, manifest.shards[shard], options, check);
  }

  Status ReadSampleRecords(Env* env, const std::string& dir, const ShardEntry& shard,
                           std::vector<SampleRecord>* records) const override {
    return ReadShardSampleTable(env, dir, shard, records);
  }
  Status ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard,
                        std::vector<ShownSize>* sizes) const override {
    return shardpack::ReadShownSizes(env, dir, shard, sizes);
  }

  bool OwnsFile(std::string_view name) const override {
    return EndsWith(name, ".tar") || EndsWith(name, ".idx") || EndsWith(name, ".samples.tsv");
  }
  bool LooksLikeShard(std::string_view name) const override {
    return name.size() > 4 && EndsWith(name, ".tar") && name.find('.') == name.rfind('.');
  }
  bool manifest_is_wids_shard_list() const override { return true; }
};

}  // namespace

const Format& WdsFormat() {
  static const WdsFormatImpl format;
  return format;
}

}  // namespace shardpack
