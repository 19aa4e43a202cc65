// NameIndex (ground/name_index.h): every name added is found with its number, a name not added (a
// prefix, a longer name, another case) is not, a name added twice finds the first, and names that
// share 32 bits of hash (found by search below, not assumed) are told apart by the caller's names.
#include "ground/name_index.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardpack {
namespace {

TEST(NameIndex, FindsWhatWasAddedAndNothingElse) {
  NameIndex index;
  std::vector<std::string> names;  // kept by the caller, by number
  std::map<std::string, uint32_t> reference;
  for (uint32_t i = 0; i < 5000; ++i) {
    names.push_back("part-" + std::to_string(i % 7) + "/shard-" + std::to_string(i) + ".tar");
    index.Add(names.back(), i);
    reference.emplace(names.back(), i);
  }
  names.push_back("part-0/shard-0.tar");  // a second time: the first stays
  index.Add(names.back(), 5000);
  index.Seal();
  EXPECT_EQ(index.size(), 5001u);
  EXPECT_EQ(index.memory_bytes(), 5001u * 8);
  for (const auto& [name, number] : reference) {
    uint32_t found = 0;
    ASSERT_TRUE(index.Find(
        name, [&](uint32_t i) { return names.at(i) == name; }, &found))
        << name;
    EXPECT_EQ(found, number) << name;
  }
  for (const std::string missing :
       {"part-0/shard-0.ta", "part-0/shard-0.tarx", "PART-0/shard-0.tar", "", "shard-0.tar"}) {
    uint32_t found = 7;
    EXPECT_FALSE(index.Find(
        missing, [&](uint32_t i) { return names.at(i) == missing; }, &found))
        << missing;
    EXPECT_EQ(found, 7u);
  }
}

TEST(NameIndex, NamesThatShareAHashAreToldApart) {
  // Two shard names with the same 32-bit hash, found by trying names (a birthday search: about
  // 2^16 names for one pair).
  std::unordered_map<uint32_t, std::string> seen;
  std::string a, b;
  for (uint64_t i = 0; a.empty(); ++i) {
    std::string name = "shard-" + std::to_string(i) + ".tar";
    const auto [it, fresh] = seen.emplace(NameIndex::Hash(name), name);
    if (!fresh) a = it->second, b = name;
  }
  ASSERT_NE(a, b);
  ASSERT_EQ(NameIndex::Hash(a), NameIndex::Hash(b));
  const std::vector<std::string> names = {"other.tar", a, b};
  NameIndex index;
  for (uint32_t i = 0; i < names.size(); ++i) index.Add(names[i], i);
  index.Seal();
  for (uint32_t want = 0; want < names.size(); ++want) {
    uint32_t found = 9;
    ASSERT_TRUE(index.Find(
        names[want], [&](uint32_t i) { return names[i] == names[want]; }, &found))
        << want;
    EXPECT_EQ(found, want);
  }
  uint32_t found = 9;
  EXPECT_FALSE(index.Find(
      a, [](uint32_t) { return false; }, &found));  // a hash that matches is not enough
  EXPECT_EQ(found, 9u);
}

}  // namespace
}  // namespace shardpack
