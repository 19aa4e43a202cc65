// WdsInput: the samples of WebDataset tar shards as a PackInput, for `convert`.
//
// Reads shards written by any tool through libarchive: ustar, GNU and PAX headers, keys with folders
// in them, optionally gzip-compressed. A sample is the run of adjacent members sharing a key (the
// member name up to the first '.' of its base name); its image is the member with extension jpg,
// jpeg, png, webp or bmp (any case), its label the integer in `.cls`. Members of one key that are not
// adjacent, absolute or '..' member names, and links or device entries stop the conversion with an
// error naming shard and member. A sample without an image, or with two, is skipped and reported.
// When the output format stores fields, every other member (caption, annotations, mask) is kept
// byte for byte as a field of the same name; otherwise a third-party sample's .json and .txt go
// into its metadata, as before fields existed.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "formats/common/pack_input.h"
#include "formats/wds/tar_shard_reader.h"
#include "shardpack/env.h"

namespace shardpack {

class WdsInput final : public PackInput {
 public:
  // own_format: the shards were written by shardpack (a manifest describes them), so keys are
  // kept as they are and each sample's .json "path" becomes its source path; otherwise keys are
  // made safe (ground/sample_keys.h rules) and the original key, .json and .txt are carried over.
  WdsInput(Env* env, std::vector<std::string> shard_paths, std::vector<std::string> classes, uint64_t expected,
           bool own_format, uint64_t max_member_bytes);
  ~WdsInput() override;

  const std::vector<std::string>& class_names() const override { return classes_; }
  uint64_t expected() const override { return expected_; }
  Status Next(PackItem* item, bool* done) override;
  void KeepFields(bool keep) override { keep_fields_ = keep; }

 private:
  struct Member {
    std::string name, key, ext, data;
    size_t shard = 0;  // index into shard_paths_
  };
  // Reads the next member worth keeping into *m (skipping directories); *end at the end of all shards.
  Status NextMember(Member* m, bool* end);
  void Emit(std::vector<Member>& members, PackItem* item);
  const Member* MetadataMember(const std::vector<Member>& members) const;
  Status NotAdjacent(const Member& m) const;
  std::string OutputKey(const std::string& key);

  Env* env_;
  std::vector<std::string> shard_paths_;
  std::vector<std::string> classes_;
  uint64_t expected_;
  bool own_format_;
  uint64_t max_member_bytes_;
  bool keep_fields_ = false;  // every member besides image, class and metadata becomes a field
  size_t shard_ = 0;          // index of the shard being read
  std::unique_ptr<TarShardReader> reader_;
  std::unordered_set<std::string> done_keys_;  // keys finished in the current shard
  std::unordered_set<uint64_t> used_keys_;     // hashes of output keys, for uniqueness
  bool have_pending_ = false;
  Member pending_;  // the first member of the next sample, read ahead
};

}  // namespace shardpack
