// FileNameTable (ground/file_name_table.h): every name added is found with its value, a name not
// added (a prefix, a longer name, another case) is not, and a name added twice finds the first.
#include "ground/file_name_table.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace shardpack {
namespace {

TEST(FileNameTable, FindsWhatWasAddedAndNothingElse) {
  FileNameTable table;
  std::map<std::string, uint64_t> reference;
  for (uint64_t i = 0; i < 5000; ++i) {
    const std::string name = "part-" + std::to_string(i % 7) + "/shard-" + std::to_string(i) + ".tar";
    table.Add(name, i * 3 + 1);
    reference.emplace(name, i * 3 + 1);
  }
  table.Add("part-0/shard-0.tar", 999);  // a second time: the first stays
  table.Seal();
  EXPECT_EQ(table.size(), 5001u);
  for (const auto& [name, value] : reference) {
    uint64_t found = 0;
    ASSERT_TRUE(table.Find(name, &found)) << name;
    EXPECT_EQ(found, value) << name;
  }
  for (const std::string missing :
       {"part-0/shard-0.ta", "part-0/shard-0.tarx", "PART-0/shard-0.tar", "", "shard-0.tar"}) {
    uint64_t found = 7;
    EXPECT_FALSE(table.Find(missing, &found)) << missing;
    EXPECT_EQ(found, 7u);
  }
  EXPECT_EQ(table.name(5000), "part-0/shard-0.tar");
  EXPECT_EQ(table.name(12), "part-5/shard-12.tar");
}

}  // namespace
}  // namespace shardpack
