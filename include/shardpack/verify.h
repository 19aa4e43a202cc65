// verify: re-reads a packed dataset and reports every problem it finds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardpack/dataset_format.h"
#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

struct VerifyOptions {
  bool decode = false;                     // also decode every image (slow, thorough)
  int threads = 0;                         // shards checked in parallel; 0 = all cores
  uint64_t max_pixels = 178'956'970;       // images declaring more pixels are reported, not decoded
  uint64_t max_member_bytes = 1ull << 30;  // larger members are reported, not read into memory
  Env* env = nullptr;                      // nullptr: Env::Default()
  RemoteOptions remote;                    // a dataset at a URL: its cache folder, credentials
  // Called as shards are done (shards done, shards), from the checking threads one at a time: the
  // CLI's progress line.
  std::function<void(uint64_t done, uint64_t total)> on_shard;
};

struct VerifyProblem {
  std::string shard;  // file name; empty for dataset-level problems
  std::string key;    // sample key; empty when the problem is not one sample's
  std::string what;   // e.g. "checksum mismatch: bytes of this sample changed"
};

struct VerifyReport {
  DatasetFormat format = DatasetFormat::kWebDataset;
  uint64_t shards = 0;
  uint64_t samples = 0;         // samples found in the shards
  uint64_t bytes = 0;           // bytes read
  uint64_t images_decoded = 0;  // with decode
  std::vector<VerifyProblem> problems;
  // A view (docs/views.md): its base as the view names it, and the samples it selects. The counts
  // above are then the base's, which is verified whole, and the view's selection files are checked.
  std::string view_base;
  uint64_t view_samples = 0;
  bool clean() const { return problems.empty(); }
};

// Checks every shard listed in dir/manifest.json: file sizes and checksums against the manifest,
// per-sample checksums against the sample tables, tar structure against the DALI index, sample
// counts, and files in dir that the manifest does not list. Returns non-OK only when verification
// cannot run at all (no or unreadable manifest); problems found go into the report.
Status Verify(const std::string& dir, const VerifyOptions& options, VerifyReport* report);

}  // namespace shardpack
