// MixtureReader: the sources of a mixture as one dataset, source after source (source i's sample k
// is index offsets[i] + k), so that the loader reads a mixture as it reads one dataset. Labels are
// each source's own, or mapped into one table of class names (Mixture::shared_classes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardpack/dataset_reader.h"
#include "shardpack/loader.h"
#include "shardpack/mixture.h"

namespace shardpack {

class MixtureReader : public DatasetReader {
 public:
  // Opens every source with `options`' Env and remote options (a URL source's cache_limit is its
  // share of the limit, by bytes, so that together they stay within it). Errors name the source:
  // one that fails to open, two that are the same dataset, a source without a mask or required
  // field that `options` asks for, or without class names when shared_classes is set.
  static Status Open(const Mixture& mixture, const LoaderOptions& options, std::unique_ptr<MixtureReader>* reader);

  // Each source's sample count and shard sizes, for MixturePlan.
  std::vector<uint64_t> source_sizes() const;
  std::vector<std::vector<uint64_t>> source_shard_sizes() const;

  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  Status ReadFieldNames(uint64_t index, std::vector<std::string>* names) const override;
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override;
  bool wants_read_plan() const override;
  // Each source gets the uses of its own shards, in the loader's positions (which every source's
  // ReachedPosition then follows).
  void PlanReads(std::vector<ShardUse> uses, uint64_t position) override;
  void ReachedPosition(uint64_t position) override;

 private:
  struct Source {
    std::unique_ptr<DatasetReader> reader;
    uint64_t first_sample = 0;    // its index 0 among the mixture's
    uint32_t first_shard = 0;     // its shard 0 among the mixture's
    std::vector<int32_t> labels;  // shared_classes: its label i becomes labels[i]
  };
  MixtureReader(Manifest manifest, std::vector<Source> sources);
  // The source of mixture index `index`, and the index within it.
  const Source& Locate(uint64_t index, uint64_t* local) const;

  std::vector<Source> sources_;
};

}  // namespace shardpack
