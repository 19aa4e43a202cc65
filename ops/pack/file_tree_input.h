// FileTreeInput: the image files of a source folder (scanned, or named by a --list file) as a
// PackInput, in sorted or shuffled order, with index or path keys. A sample's other files
// (ops/pack/source_scan.h) travel as its fields when the output format stores them, and are reported
// as not packed when it does not.
#pragma once

#include <memory>
#include <string>

#include "formats/common/pack_input.h"
#include "ops/pack/source_scan.h"
#include "shardpack/env.h"
#include "shardpack/pack.h"

namespace shardpack {

class FileTreeInput final : public PackInput {
 public:
  static Status Open(Env* env, const std::string& src, const PackOptions& options, std::unique_ptr<PackInput>* input);

  const std::vector<std::string>& class_names() const override { return tree_.class_names; }
  std::vector<std::string> empty_classes() const override { return tree_.empty_classes; }
  std::vector<SkippedFile> initial_skips() const override;
  void KeepFields(bool keep) override { keep_fields_ = keep; }
  uint64_t expected() const override { return tree_.files.size(); }
  Status Next(PackItem* item, bool* done) override;
  Status Load(PackItem* item) const override;

 private:
  FileTreeInput(Env* env, std::string src, uint64_t max_bytes)
      : env_(env), src_(std::move(src)), max_bytes_(max_bytes) {}

  Env* env_;
  std::string src_;
  uint64_t max_bytes_;
  SourceTree tree_;
  std::vector<uint32_t> order_;
  std::vector<std::string> path_keys_;  // by position; empty for index keys
  size_t next_ = 0;
  bool keep_fields_ = true;
};

}  // namespace shardpack
