// Random access to the records of a shardpack LMDB dataset: one read-only transaction per Read()
// (LMDB readers do not block each other or the writer).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "formats/lmdb/lmdb_environment.h"
#include "formats/lmdb/lmdb_format.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class LmdbDatasetReader final : public DatasetReader {
 public:
  static Status Open(const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                     std::unique_ptr<DatasetReader>* reader);
  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;

 private:
  // Hands sample `index`'s record (and its key) to `use` inside a read transaction, while the
  // record's bytes are valid.
  Status WithRecord(uint64_t index,
                    const std::function<Status(std::string_view record, const std::string& key)>& use) const;
  Status WithSample(uint64_t index, const std::function<void(LmdbSample&)>& use) const;
  explicit LmdbDatasetReader(std::shared_ptr<const CompactManifest> manifest) : DatasetReader(std::move(manifest)) {}
  std::unique_ptr<LmdbEnvironment> lmdb_;
};

}  // namespace shardpack
