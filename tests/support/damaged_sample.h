// Damages one sample of a packed wds dataset the way a bad disk or a truncated copy would, for the
// tests of what the readers do with it (skip, report, count).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/wds/dali_index.h"
#include "tests/support/temp_dir.h"

namespace shardpack::testing {

// Overwrites 40 bytes of the entropy-coded data of sample 0's JPEG in DATASET/shard-000000.tar
// (keeping its end marker), so that libjpeg stops on it with an error: corrupt, not unreadable.
inline void DamageFirstJpegScan(const std::string& dataset) {
  std::vector<DaliIndexSample> index;
  ASSERT_TRUE(ParseDaliIndex(ReadFile(dataset + "/shard-000000.idx"), &index).ok());
  std::string shard = ReadFile(dataset + "/shard-000000.tar");
  const DaliIndexMember& jpg = index[0][1];
  const size_t scan = shard.find("\xFF\xDA", jpg.offset);
  ASSERT_NE(scan, std::string::npos);
  for (size_t i = scan + 20; i < scan + 60; ++i) shard[i] = '\xFF';
  WriteFile(dataset + "/shard-000000.tar", shard);
}

// What a reader's TakeSkipReports gives after an epoch over DamageFirstJpegScan's dataset (`first`)
// and on the next call (`again`): one line naming sample 0, then nothing (each skip is named once).
inline void ExpectSampleZeroNamedOnce(const std::vector<std::string>& first, const std::vector<std::string>& again) {
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].rfind("skipped sample 000000000 (index 0): ", 0), 0u) << first[0];
  EXPECT_TRUE(again.empty());
}

}  // namespace shardpack::testing
