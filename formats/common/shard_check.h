// ShardCheck: what a format's verifier found in one shard (or, for LMDB, the one environment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "shardpack/verify.h"

namespace shardpack {

struct ShardCheck {
  // A badly damaged shard lists this many problems, then one line that there are more: enough to
  // see the pattern, and verify's report stays readable (and bounded) for any damage.
  static constexpr size_t kMaxProblems = 50;

  uint64_t samples = 0;  // samples found
  uint64_t bytes = 0;    // bytes read
  uint64_t images_decoded = 0;
  std::vector<VerifyProblem> problems;

  // Lists a problem of `shard` (key: the sample's, or empty), up to kMaxProblems.
  void AddProblem(const std::string& shard, const std::string& key, const std::string& what) {
    if (problems.size() < kMaxProblems) {
      problems.push_back({shard, key, what});
    } else if (problems.size() == kMaxProblems) {
      problems.push_back({shard, "", "more problems in this shard not listed"});
    }
  }
};

// A verifier's read of one side file (an index, a sample table) of `shard`, checked against the
// checksum the manifest lists. False, with the problem listed, when it cannot be read; a checksum
// mismatch is listed but the contents still come back, so that their own checks run too.
bool LoadSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                          uint64_t max_bytes, ShardCheck* check, std::string* contents);
// The same check for a side file too large to hold (a raw shard's mask array, a third the size of
// its pixels): checksummed as it streams by, its length into *size.
bool ChecksumSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                              ShardCheck* check, uint64_t* size);

// verify --decode of a dataset packed with a resolution bound (pack --max-side, recorded in the
// manifest's options): a sentence naming the image's size and the bound when `image` (its bytes,
// decoded as `decoded`) has its bounded side, as shown, over the bound; empty when it is within it
// or the dataset has no bound.
std::string ResolutionBoundProblem(const Manifest& manifest, std::string_view image, const DecodedImage& decoded);

}  // namespace shardpack
