#include "ground/sample_keys.h"

#include <gtest/gtest.h>

#include <set>

namespace shardpack {
namespace {

TEST(IndexKey, IsZeroPaddedToNineDigits) {
  EXPECT_EQ(IndexKey(0), "000000000");
  EXPECT_EQ(IndexKey(42), "000000042");
  EXPECT_EQ(IndexKey(1234567890), "1234567890");
}

TEST(SanitizedPathKey, DropsExtensionAndReplacesDotsAndSlashes) {
  EXPECT_EQ(SanitizedPathKey("n01440764/n01440764_10026.JPEG"), "n01440764_n01440764_10026");
  EXPECT_EQ(SanitizedPathKey("cat/a.b.c.jpg"), "cat_a_b_c");
  EXPECT_EQ(SanitizedPathKey("dog/ünï cødé.png"), "dog___n___c__d__");
  EXPECT_EQ(SanitizedPathKey("x/.jpg"), "x__jpg");
}

TEST(SanitizedPathKey, ShortensLongPathsWithAHash) {
  std::string a = "cls/" + std::string(200, 'a') + "1.jpg";
  std::string b = "cls/" + std::string(200, 'a') + "2.jpg";
  std::string ka = SanitizedPathKey(a), kb = SanitizedPathKey(b);
  EXPECT_LE(ka.size(), kMaxKeyLength - 8);
  EXPECT_NE(ka, kb);
}

TEST(UniquePathKeys, MakesCollidingKeysUnique) {
  std::vector<std::string> keys = UniquePathKeys({"a/b.jpg", "a_b.png", "a/b.png", "a_b_2.jpg"});
  EXPECT_EQ(keys, (std::vector<std::string>{"a_b", "a_b_2", "a_b_3", "a_b_2_2"}));
}

TEST(UniquePathKeys, KeysHaveNoDotsNoSlashesAndFitUstar) {
  std::vector<std::string> paths;
  for (int i = 0; i < 50; ++i) paths.push_back("c.d/" + std::string(i * 3, 'x') + ".v" + std::to_string(i) + ".jpg");
  paths.push_back(paths[3]);
  std::vector<std::string> keys = UniquePathKeys(paths);
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  for (const std::string& k : keys) {
    EXPECT_EQ(k.find('.'), std::string::npos) << k;
    EXPECT_EQ(k.find('/'), std::string::npos) << k;
    EXPECT_LE(k.size() + 5, 100u) << k;  // "<key>.json" fits the ustar name field
  }
}

}  // namespace
}  // namespace shardpack
