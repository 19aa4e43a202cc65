#include "ground/units.h"

#include <gtest/gtest.h>

namespace shardpack {
namespace {

uint64_t Parse(const std::string& s) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseByteSize(s, &v).ok()) << s;
  return v;
}

TEST(ParseByteSize, AcceptsDecimalAndBinaryUnits) {
  EXPECT_EQ(Parse("1048576"), 1048576u);
  EXPECT_EQ(Parse("512MB"), 512000000u);
  EXPECT_EQ(Parse("512mb"), 512000000u);
  EXPECT_EQ(Parse("1.5GB"), 1500000000u);
  EXPECT_EQ(Parse("64KiB"), 65536u);
  EXPECT_EQ(Parse("2g"), 2000000000u);
  EXPECT_EQ(Parse("1GiB"), 1073741824u);
}

TEST(ParseByteSize, RejectsNonsense) {
  uint64_t v;
  for (const char* bad : {"", "MB", "12XB", "-5MB", "0", "1.2.3MB"}) {
    Status s = ParseByteSize(bad, &v);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseByteSize("12XB", &v).message(),
            "'12XB' is not a byte size; write a number with an optional unit, e.g. 512MB or 1GiB");
}

TEST(FormatBytes, UsesDecimalUnits) {
  EXPECT_EQ(FormatBytes(900), "900 B");
  EXPECT_EQ(FormatBytes(1500), "1.5 KB");
  EXPECT_EQ(FormatBytes(2200000000ull), "2.2 GB");
}

}  // namespace
}  // namespace shardpack
