// LmdbInput: the samples of a shardpack LMDB dataset as a PackInput, for `convert`. Keeps one
// read-only transaction and cursor open while the pipeline reads (MDB_NOTLS lets the pipeline's
// serial stage use them from whichever thread runs it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/pack_input.h"
#include "formats/lmdb/lmdb_environment.h"

namespace shardpack {

class LmdbInput final : public PackInput {
 public:
  static Status Open(const std::string& dir, std::vector<std::string> classes, uint64_t expected,
                     std::unique_ptr<PackInput>* input);
  ~LmdbInput() override;

  const std::vector<std::string>& class_names() const override { return classes_; }
  uint64_t expected() const override { return expected_; }
  Status Next(PackItem* item, bool* done) override;

 private:
  LmdbInput(std::vector<std::string> classes, uint64_t expected) : classes_(std::move(classes)), expected_(expected) {}

  std::vector<std::string> classes_;
  uint64_t expected_;
  std::unique_ptr<LmdbEnvironment> lmdb_;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  bool started_ = false;
};

}  // namespace shardpack
