// Format: everything the operations (pack, convert, verify, stat, open) need to know about one
// on-disk format. Each formats/<name>/ implements it once; formats/registry/ lists them in one
// table. Nothing outside a format's folder and the table compares a format's name: an operation
// looks the format up by the name the user or the manifest gives, and calls it.
//
// A capability a format lacks answers with a clear error (the defaults below), never with a
// silent no-op. Implementations hold no state: one const instance serves every thread.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "formats/common/pack_input.h"
#include "formats/common/shard_check.h"
#include "formats/common/sharded_dataset_writer.h"
#include "ground/sample_table.h"
#include "shardpack/dataset_format.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"
#include "shardpack/shard_table.h"
#include "shardpack/status.h"
#include "shardpack/verify.h"

namespace shardpack {

class Format {
 public:
  virtual ~Format() = default;

  // Which format this is; its name (--format, the manifest's "format" field) is the enum's.
  virtual DatasetFormat id() const = 0;
  std::string_view name() const { return DatasetFormatName(id()); }

  // --- pack and convert ---

  // The option rules of this format, after the generic ones (ValidatePackOptions) passed.
  // InvalidArgument naming the option and the fix.
  virtual Status CheckPackOptions(const PackOptions& options) const = 0;
  // Adds the options that shape this format's output to the manifest's "options" object.
  virtual void AddManifestOptions(const PackOptions& options, nlohmann::json* manifest_options) const {
    (void)options;
    (void)manifest_options;
  }
  // The inverse, for an append that takes the dataset's options: sets in *options those of this
  // format's that `manifest_options` records and `given` does not name. DataLoss naming the field
  // when one is not what AddManifestOptions writes.
  virtual Status TakeManifestOptions(const nlohmann::json& manifest_options, const std::set<std::string>& given,
                                     PackOptions* options) const {
    (void)manifest_options;
    (void)given;
    (void)options;
    return Status::OK();
  }
  // The pipeline's parallel stage, after the image was probed and found within --max-pixels: the
  // per-sample work this format needs off the ordered stage (a checksum, a decode). Thread-safe.
  // An error skips the sample with that reason.
  virtual Status PrepareSample(const PackOptions& options, PackItem* item) const = 0;
  // The writer of a pack into `out` (which exists).
  virtual std::unique_ptr<DatasetWriter> NewWriter(Env* env, const std::string& out,
                                                   const PackOptions& options) const = 0;
  // The samples of a dataset of this format as a pipeline input, for convert.
  virtual Status OpenConvertInput(Env* env, const std::string& dir, const Manifest& manifest, uint64_t max_member_bytes,
                                  std::unique_ptr<PackInput>* input) const;
  // Convert from a file or folder without a manifest (shards written by other tools). NotFound
  // when `path` holds nothing this format recognises.
  virtual Status OpenForeignInput(Env* env, const std::string& path, uint64_t max_member_bytes,
                                  std::unique_ptr<PackInput>* input) const;

  // Whether the writer stores any of Sample::fields (a sample's caption, annotations, mask).
  // Formats that do not are never given any: the inputs report those files as not packed.
  virtual bool stores_fields() const { return false; }
  // Whether it stores the field `name`: the pipeline gives the writer only those, and reports the
  // others as not packed.
  virtual bool StoresField(const std::string& /*name*/) const { return stores_fields(); }

  // --- reading ---

  // Random access to the dataset in `dir`, described by `manifest` (shared: a remote dataset's Env
  // finds its files by the same shard table); `options`: what DatasetReader::Open was given (its
  // index_memory bounds the shards' indexes kept).
  virtual Status OpenReader(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                            const RemoteOptions& options, std::unique_ptr<DatasetReader>* reader) const = 0;
  // Random access to a list of shard files without a manifest (shard lists such as
  // "train-{000000..000127}.tar"). Unsupported unless the format has self-describing shards.
  virtual Status OpenShardList(Env* env, const std::vector<std::string>& paths, const RemoteOptions& options,
                               std::unique_ptr<DatasetReader>* reader) const;
  virtual bool reads_shard_lists() const { return false; }
  // The shard files of other tools that the folder `dir` holds, sorted by name (a folder that
  // holds only such shards is read as their list); none when the format reads no shard lists.
  virtual Status ListShardFiles(Env* env, const std::string& dir, std::vector<std::string>* paths) const;
  // Whether OpenReader's reader opens every shard through `env` (and reads it only when a sample
  // of it is wanted), so that a remote dataset's shards can arrive while it reads. A format whose
  // library opens its files itself (LMDB) says no: its shards are downloaded before it opens.
  virtual bool reads_shards_through_env() const { return true; }
  // Whether the writer writes every file through its Env (temporary names, then a rename), so that
  // OUT may be an object store (storage/s3/object_store_output_env.h). LMDB's library writes its file in
  // place.
  virtual bool writes_through_env() const { return true; }

  // --- verify and stat ---

  // Checks shard `shard` of the manifest (its files, indexes, side files, samples). Never fails:
  // every problem, unreadable files included, goes into `check`.
  virtual void VerifyShard(Env* env, const std::string& dir, const Manifest& manifest, size_t shard,
                           const VerifyOptions& options, ShardCheck* check) const = 0;
  // The per-sample records (size, label, image format, dimensions) of one shard, for stat.
  virtual Status ReadSampleRecords(Env* env, const std::string& dir, const ShardEntry& shard,
                                   std::vector<SampleRecord>* records) const = 0;
  // Each sample's size as shown, for buckets and token budgets (which read every shard's at open):
  // by default from ReadSampleRecords; a format with a sample table parses its size columns alone.
  virtual Status ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard,
                                std::vector<ShownSize>* sizes) const;

  // --- the files in a dataset folder ---

  // Whether a file of this name in a dataset folder is this format's (pack --force and a fresh
  // --resume remove such files, and nothing else).
  virtual bool OwnsFile(std::string_view name) const = 0;
  // Whether a file of this name would be taken for one of this format's shards by a tool that
  // globs for them (verify reports such a file when the manifest does not list it).
  virtual bool LooksLikeShard(std::string_view name) const = 0;
  // Whether the manifest of this format is also a `wids` shard list (wids reads its shards).
  virtual bool manifest_is_wids_shard_list() const { return false; }
};

// A format shardpack reads (in place, and as convert's input) but never writes: another tool's
// datasets (MDS, LitData, Parquet). --format never names it (ParseDatasetFormat refuses the name
// first); the writing calls say so again in case, and nothing in its folders is shardpack's, so
// that pack --force never removes another tool's files.
class ReadOnlyFormat : public Format {
 public:
  Status CheckPackOptions(const PackOptions&) const override {
    return Status::InvalidArgument("shardpack reads " + std::string(name()) +
                                   " datasets but does not write them: use --format " + DatasetFormatNames());
  }
  Status PrepareSample(const PackOptions&, PackItem*) const override {
    return Status::Unsupported("shardpack does not write " + std::string(name()) + " datasets");
  }
  std::unique_ptr<DatasetWriter> NewWriter(Env*, const std::string&, const PackOptions&) const override {
    return nullptr;
  }
  bool OwnsFile(std::string_view) const override { return false; }
};

// Shared pieces of the formats' implementations.

// InvalidArgument when any of the raw format's pixel options is set: formats that keep the
// encoded images call it from CheckPackOptions.
Status RejectPixelOptions(const PackOptions& options);
// PrepareSample's part for formats that keep encoded images: with --check decode, a full decode.
Status CheckByDecoding(const PackOptions& options, PackItem* item);
// The sample table of `shard` (ReadSampleRecords of the formats that keep one per shard).
Status ReadShardSampleTable(Env* env, const std::string& dir, const ShardEntry& shard,
                            std::vector<SampleRecord>* records);
// The shard options of a pack into `out`.
ShardOptions ShardOptionsOf(const std::string& out, const PackOptions& options);
bool EndsWith(std::string_view s, std::string_view suffix);

}  // namespace shardpack
