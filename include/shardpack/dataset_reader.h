// DatasetReader: random access to sample i of a packed dataset of any format. The base of the
// training-side loader (issue 4) and of `shardpack.open(path)[i]`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/shard_table.h"
#include "shardpack/status.h"

namespace shardpack {

// The samples of one shard that a reader will read, as positions in its own order of reads (the
// loader: its batch numbers).
struct ShardUse {
  uint32_t shard = 0;  // in the manifest's order
  uint64_t first = 0, last = 0;
};

struct ReadSample {
  std::string key;
  int32_t label = -1;
  ImageFormat format = ImageFormat::kUnknown;  // of the encoded image, or of the source (raw)
  std::string encoded;                         // wds, lmdb: the image file's bytes, untouched
  DecodedImage pixels;                         // raw: the stored pixels (RGB, HWC)
};

class DatasetReader {
 public:
  // Opens the dataset in `dir` (its manifest names the format), or, when `dir` is a shard list such
  // as "train-{000000..000127}.tar" (see shardpack/shard_spec.h), those WebDataset shards as
  // OpenShards does. env: nullptr for Env::Default(). Reads the manifest and nothing per sample: a
  // shard's indexes (sample table, DALI index) are read when one of its samples is first asked
  // for, and kept, about 60 bytes a sample, within remote.index_memory (least recently used shards
  // dropped past it).
  // A URL (http://, https://, s3://; docs/remote.md) is read as `remote` says.
  static Status Open(const std::string& dir, Env* env, std::unique_ptr<DatasetReader>* reader,
                     const RemoteOptions& remote = RemoteOptions());
  // Opens WebDataset tar shards written by any tool, in the order given. A shard with a DALI index
  // beside it ("<name>.idx") is located through it; any other is indexed on open by reading its tar
  // headers. Labels come from ".cls" fields (-1 without; a ".cls" that holds no integer is kept as
  // a field). A compressed shard (.tar.gz) is decompressed on open into a temporary folder, which
  // goes with the reader: to read one many times, convert it once (shardpack convert).
  static Status OpenShards(const std::vector<std::string>& paths, Env* env, std::unique_ptr<DatasetReader>* reader,
                           const RemoteOptions& remote = RemoteOptions());
  virtual ~DatasetReader() = default;

  // The manifest, its shard list compacted (shardpack/shard_table.h: about 130 bytes a shard).
  const CompactManifest& manifest() const { return *manifest_; }
  std::shared_ptr<const CompactManifest> shared_manifest() const { return manifest_; }
  uint64_t size() const { return manifest_->samples; }
  // Sample `index` in dataset order. Thread-safe; `out`'s buffers are reused. InvalidArgument for an
  // index past the end, DataLoss or IOError when the files cannot deliver it.
  virtual Status Read(uint64_t index, ReadSample* out) const = 0;
  // The sample's JSON metadata (a WebDataset sample's .json field), empty when the format or the
  // sample has none. Not on the training path: one more read per sample.
  virtual Status ReadMetadata(uint64_t index, std::string* json) const {
    json->clear();
    return CheckIndex(index);
  }
  // The bytes of the sample's field `name` (a caption "txt", annotations "json", a mask
  // "seg.png"; docs/formats/source-layout.md), untouched; *present false when the sample has no
  // such field or the format keeps none. Thread-safe.
  virtual Status ReadField(uint64_t index, const std::string& /*name*/, std::string* data, bool* present) const {
    data->clear();
    *present = false;
    return CheckIndex(index);
  }
  // The names of sample `index`'s fields, each of which ReadField reads. A packed dataset names the
  // fields its manifest counts (a sample may lack some: ReadField says so); shards of another tool,
  // which have no manifest, name the sample's own members besides its image and class, in the
  // shard's order. Thread-safe.
  virtual Status ReadFieldNames(uint64_t index, std::vector<std::string>* names) const {
    names->clear();
    for (const auto& field : manifest().field_counts) names->push_back(field.first);
    return CheckIndex(index);
  }
  // A label mask that the format keeps decoded (raw stores each image field as pixels, cut as its
  // image was at pack time): field `name` of the sample as one 8-bit channel of the stored image's
  // width x height, into *pixels; *present false when the sample has no such mask or the format
  // keeps masks as files (ReadField gives those). Thread-safe.
  virtual Status ReadMaskPixels(uint64_t index, const std::string& /*name*/, std::string* pixels, bool* present) const {
    pixels->clear();
    *present = false;
    return CheckIndex(index);
  }

  // Hints for readers whose shards arrive over a network (a URL opened without a full download).
  // PlanReads: the shards in the order of their first use (`first` ascending), which they download
  // ahead in and evict by, and where the reads are (`position`: every use before it is done). A
  // plan may cover part of an epoch (the loader plans a window of batches at a time): a new one
  // replaces the last, and shards it does not list are not needed for now. ReachedPosition: how
  // far the reads have got. Readers of local files
  // ignore both, and say so with wants_read_plan(), so that nobody computes a plan for nothing.
  virtual bool wants_read_plan() const { return false; }
  virtual void PlanReads(std::vector<ShardUse> uses, uint64_t position) {
    (void)uses;
    (void)position;
  }
  virtual void ReachedPosition(uint64_t position) { (void)position; }

 protected:
  explicit DatasetReader(Manifest manifest) : manifest_(std::make_shared<const CompactManifest>(std::move(manifest))) {}
  // A reader that adds to another shares its manifest (shared_manifest()): a copy a layer would cost
  // hundreds of bytes a shard, 28 MB at 100,000 shards.
  explicit DatasetReader(std::shared_ptr<const CompactManifest> manifest) : manifest_(std::move(manifest)) {}
  Status CheckIndex(uint64_t index) const {
    if (index < size()) return Status::OK();
    return Status::InvalidArgument("sample " + std::to_string(index) + " is past the end of the dataset (" +
                                   std::to_string(size()) + " samples)");
  }

 private:
  std::shared_ptr<const CompactManifest> manifest_;  // never null
};

}  // namespace shardpack
