// ViewDatasetReader: a view (docs/views.md) read as a dataset of its own: sample i of the view is
// the i-th selected sample of its base, read by the base's reader. A shard's selection file is read
// when one of its samples is first asked for, and kept (4 bytes a selected sample of the shards
// read; the view's manifest costs a few dozen bytes a shard).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/read/opened_dataset.h"
#include "shardpack/dataset_reader.h"

namespace shardpack {

class ViewDatasetReader : public DatasetReader {
 public:
  // `base` reads the view's base, which the caller checked to be the one it was made from
  // (CheckViewBase).
  static Status Open(std::shared_ptr<const OpenedView> view, std::unique_ptr<DatasetReader> base,
                     std::unique_ptr<DatasetReader>* reader);

  Status Read(uint64_t index, ReadSample* out) const override;
  Status ReadMetadata(uint64_t index, std::string* json) const override;
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override;
  Status ReadFieldNames(uint64_t index, std::vector<std::string>* names) const override;
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override;
  bool wants_read_plan() const override { return base_->wants_read_plan(); }
  void PlanReads(std::vector<ShardUse> uses, uint64_t position) override;
  void ReachedPosition(uint64_t position) override { base_->ReachedPosition(position); }

 private:
  // One view shard's selection, read once (std::call_once) by whichever thread first needs it.
  struct Selection {
    std::once_flag once;
    Status status;
    std::vector<uint32_t> positions;
  };

  ViewDatasetReader(std::shared_ptr<const OpenedView> view, std::unique_ptr<DatasetReader> base, Manifest manifest);
  // The base's index of the view's sample `index`.
  Status BaseIndex(uint64_t index, uint64_t* base_index) const;

  const std::shared_ptr<const OpenedView> view_;
  const std::unique_ptr<DatasetReader> base_;
  std::vector<uint64_t> starts_;       // view shard s holds the view's samples [starts_[s], starts_[s + 1])
  std::vector<uint64_t> base_starts_;  // ... taken from the base shard whose first sample is base_starts_[s]
  std::unique_ptr<Selection[]> selections_;
};

}  // namespace shardpack
