// ForwardingDatasetReader: a DatasetReader that passes every call on to another. The base of every
// reader that adds to a format's reader (RemoteDatasetReader), so that none of them can leave a
// method of the interface at its default, as RemoteDatasetReader once left ReadMaskPixels: raw
// masks over a URL then looked missing. tests/reader_decorator_test.cc runs each such reader through
// every method against the local reader.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shardpack/dataset_reader.h"

namespace shardpack {

class ForwardingDatasetReader : public DatasetReader {
 public:
  // `owner` is kept until after `reader` is destroyed: what the reader reads through (an Env, a
  // shard store) must outlive it.
  ForwardingDatasetReader(std::unique_ptr<DatasetReader> reader, std::shared_ptr<void> owner)
      : DatasetReader(reader->shared_manifest()), owner_(std::move(owner)), reader_(std::move(reader)) {}

  Status Read(uint64_t index, ReadSample* out) const override { return reader_->Read(index, out); }
  Status ReadMetadata(uint64_t index, std::string* json) const override { return reader_->ReadMetadata(index, json); }
  Status ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const override {
    return reader_->ReadField(index, name, data, present);
  }
  Status ReadFieldNames(uint64_t index, std::vector<std::string>* names) const override {
    return reader_->ReadFieldNames(index, names);
  }
  Status ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels, bool* present) const override {
    return reader_->ReadMaskPixels(index, name, pixels, present);
  }
  bool wants_read_plan() const override { return reader_->wants_read_plan(); }
  void PlanReads(std::vector<ShardUse> uses, uint64_t position) override {
    reader_->PlanReads(std::move(uses), position);
  }
  void ReachedPosition(uint64_t position) override { reader_->ReachedPosition(position); }

 protected:
  const DatasetReader& inner() const { return *reader_; }

 private:
  // Declared first, so destroyed last.
  const std::shared_ptr<void> owner_;
  const std::unique_ptr<DatasetReader> reader_;
};

}  // namespace shardpack
