// Random access to an MDS dataset in place (shardpack.open, the loader). A sample of an
// uncompressed shard is read alone: its two offsets, then its bytes (as Streaming's own reader
// does). A compressed shard is decompressed whole when one of its samples is first asked for and
// kept, a few shards at a time (kMdsShardsKept, least recently used dropped): the loader reads a
// shard's samples together, so that a shard is decompressed about once an epoch.
//
// Keys are the samples' places in the dataset (IndexKey: 000000000, ...), which convert gives them
// too. Labels are numbers (no class names). Fields: "json", the columns besides the image and label.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/common/kept_shards.h"
#include "formats/common/shard_locator.h"
#include "formats/mds/mds_dataset.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

inline constexpr size_t kMdsShardsKept = 16;

class MdsDatasetReader final : public DatasetReader {
 public:
  // `manifest`: MdsManifest of the dataset in `dir`, which is read again here (its columns).
  static Status Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                     std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;

 private:
  MdsDatasetReader(Env* env, std::shared_ptr<const CompactManifest> manifest, MdsDataset dataset);
  // Sample `index` decoded into *out, its bytes (which out->encoded views) in *bytes.
  Status Decode(uint64_t index, bool want_fields, MdsDecoded* out, std::string* bytes) const;
  // The bytes of sample `local` of shard `shard` into *bytes.
  Status SampleBytes(size_t shard, uint64_t local, std::string* bytes) const;
  Status OpenShardFile(size_t shard, std::shared_ptr<RandomAccessFile>* file) const;

  Env* env_;
  MdsDataset dataset_;
  ShardLocator locator_;
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<RandomAccessFile>> files_;  // uncompressed shards, opened on first use
  // Decompressed shards (KeptShards: a second reader of a shard being decompressed waits for it).
  struct Kept {
    std::mutex loading;
    std::shared_ptr<const std::string> raw;  // null until loaded
    MdsShardView view;                       // over *raw, its header checked
    Status status;
  };
  // Shard `shard` decompressed (loaded now, or kept from before).
  Status DecompressedShard(size_t shard, std::shared_ptr<const Kept>* kept) const;
  mutable KeptShards<Kept> kept_{kMdsShardsKept};
};

}  // namespace shardpack
