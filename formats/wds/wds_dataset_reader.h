// Random access to the samples of a WebDataset: the DALI index locates each sample's image member,
// which is read with one pread. A shardpack dataset folder, or tar shards by path from any tool
// (indexed on open when they have no DALI index beside them).
//
// A dataset folder opens from its manifest alone. When one of a shard's samples is first asked for,
// its sample table and DALI index are checked against the manifest and kept open as LineFiles
// (ground/line_file.h: a few KB a shard, not their parse), and each sample's line of both is read
// when the sample is: reading at random over 100,000 shards touches a new shard for almost every
// sample (issue 39). Shards by path keep their index (fixed-width records, the keys back to back).
// Either within ShardIndexCache's bound (formats/common/shard_index_cache.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/shard_index_cache.h"
#include "formats/common/shard_locator.h"
#include "formats/wds/wds_shard_index.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class WdsDatasetReader final : public DatasetReader {
 public:
  // index_memory: the bound of the shards' indexes kept (ShardIndexCache).
  static Status Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                     uint64_t index_memory, std::unique_ptr<DatasetReader>* reader);
  // Shards by path, in the order given, each indexed now (their sample counts make the manifest it
  // reports, which lists them). A compressed shard (.tar.gz) is decompressed first, into a folder of
  // its own under the system's temporary folder ($TMPDIR, else /tmp) that the reader removes when
  // it is destroyed: a gzip stream cannot be read at random. Its manifest then lists that copy.
  static Status OpenShards(Env* env, const std::vector<std::string>& paths, uint64_t index_memory,
                           std::unique_ptr<DatasetReader>* reader);
  ~WdsDatasetReader() override;
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  // Shards by path: each sample's own members besides its image and class (a shardpack dataset: its
  // manifest's fields, as every reader).
  Status ReadFieldNames(uint64_t index, std::vector<std::string>* names) const override;

  // What is kept of one shard: its file, and where its samples lie (or how to find out).
  class Shard;

 private:
  explicit WdsDatasetReader(std::shared_ptr<const CompactManifest> manifest);
  // The shard of sample `index` (which CheckIndex accepted), loaded if need be, and where the
  // sample's members lie in it (in this thread's scratch, good until its next Find).
  Status Find(uint64_t index, std::shared_ptr<const Shard>* shard, const WdsSampleLocation** sample) const;

  class UnpackedShards;
  // Declared before shards_, so destroyed after it: the copies outlive every shard open on them.
  std::unique_ptr<UnpackedShards> unpacked_;
  bool by_path_ = false;  // opened by OpenShards
  ShardLocator locator_;
  std::unique_ptr<ShardIndexCache<Shard>> shards_;
};

}  // namespace shardpack
