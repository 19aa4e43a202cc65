// ShardTable and CompactManifest: a reader's compact copy of a manifest's shard list gives back
// every entry exactly as the manifest gave it, in a known number of bytes a shard.
#include "shardpack/shard_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shardpack/dataset_reader.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

void ExpectSameEntry(const ShardEntry& want, const ShardEntry& got) {
  EXPECT_EQ(got.file, want.file);
  EXPECT_EQ(got.samples, want.samples);
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.xxh64, want.xxh64);
  EXPECT_EQ(got.index.file, want.index.file);
  EXPECT_EQ(got.index.xxh64, want.index.xxh64);
  EXPECT_EQ(got.sample_table.file, want.sample_table.file);
  EXPECT_EQ(got.sample_table.xxh64, want.sample_table.xxh64);
  ASSERT_EQ(got.side_files.size(), want.side_files.size());
  for (size_t i = 0; i < want.side_files.size(); ++i) {
    EXPECT_EQ(got.side_files[i].file, want.side_files[i].file);
    EXPECT_EQ(got.side_files[i].xxh64, want.side_files[i].xxh64);
  }
  EXPECT_EQ(got.fields, want.fields);
}

// Entries that reach every corner of the record: empty strings, names longer than one length byte
// holds (127), counts that take ten, side files and fields, non-ASCII names.
std::vector<ShardEntry> VariedEntries() {
  std::vector<ShardEntry> shards(4);
  shards[0].file = "shard-000000.tar";
  shards[0].samples = 10000;
  shards[0].bytes = 123456789;
  shards[0].xxh64 = "0123456789abcdef";
  shards[0].index = {"shard-000000.idx", "fedcba9876543210"};
  shards[0].sample_table = {"shard-000000.samples.tsv", "00000000000000ff"};
  shards[1].file = std::string(300, 'a') + "/\xc3\xa9t\xc3\xa9.tar";  // two length bytes, UTF-8
  shards[1].samples = uint64_t(1) << 63;
  shards[1].bytes = ~uint64_t(0);
  shards[2].file = "raw-000002.bin";
  shards[2].side_files = {{"raw-000002.labels.npy", "1111111111111111"}, {"raw-000002.keys.txt", ""}};
  shards[2].fields = {{"txt", 3}, {"seg.png", uint64_t(1) << 40}, {"", 0}};
  shards[3] = shards[0];  // an entry like another is kept as its own
  shards[3].samples = 1;
  return shards;
}

TEST(ShardTable, GivesBackEveryEntryExactly) {
  const std::vector<ShardEntry> shards = VariedEntries();
  const ShardTable table(shards);
  ASSERT_EQ(table.size(), shards.size());
  EXPECT_FALSE(table.empty());
  for (size_t i = 0; i < shards.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(table.samples(i), shards[i].samples);
    EXPECT_EQ(table.bytes(i), shards[i].bytes);
    EXPECT_EQ(table.file(i), shards[i].file);
    EXPECT_EQ(table.xxh64(i), shards[i].xxh64);
    ExpectSameEntry(shards[i], table.entry(i));
  }
  EXPECT_TRUE(ShardTable().empty());
  EXPECT_TRUE(ShardTable(std::vector<ShardEntry>()).empty());
}

// A dataset's usual entry: three names of 16-24 characters and three checksums. The bytes a shard,
// counted by hand: three 8-byte numbers (samples, bytes, where its record starts) and the record:
// each string as one length byte and its characters, and two zero counts (side files, fields).
TEST(ShardTable, HoldsAUsualShardInItsCountsAndARecordOfItsNames) {
  const size_t n = 100000;
  std::vector<ShardEntry> shards(n);
  uint64_t characters = 0;
  for (size_t i = 0; i < n; ++i) {
    char stem[32];
    std::snprintf(stem, sizeof(stem), "shard-%06zu", i);
    ShardEntry& s = shards[i];
    s.file = std::string(stem) + ".tar";
    s.xxh64 = "0123456789abcdef";
    s.index = {std::string(stem) + ".idx", "0123456789abcdef"};
    s.sample_table = {std::string(stem) + ".samples.tsv", "0123456789abcdef"};
    s.samples = 10000;
    characters += s.file.size() + s.index.file.size() + s.sample_table.file.size() + 3 * 16;
  }
  const ShardTable table(shards);
  const uint64_t expected = sizeof(ShardTable) + 3 * 8 * n + 8 + characters + 6 * n + 2 * n;
  EXPECT_GE(table.memory_bytes(), expected);
  EXPECT_LE(table.memory_bytes(), expected + 64);
  // That is 136 bytes a shard (24 + 16 + 16 + 24 + 48 + 8), against ShardEntry's ~470.
  ExpectSameEntry(shards[n - 1], table.entry(n - 1));
}

TEST(CompactManifest, KeepsTheHeaderAndCountsEveryShardsFields) {
  Manifest m;
  m.name = "train";
  m.format = DatasetFormat::kRaw;
  m.tool_version = "9.9.9";
  m.options_json = R"({"keys":"index"})";
  m.classes = {"cat", "dog"};
  m.samples = 7;
  m.bytes = 99;
  m.skipped = {{"a/b.jpg", "truncated"}};
  m.empty_classes = {"eel"};
  m.wids_shard_list = true;
  m.shards = VariedEntries();
  const std::vector<ShardEntry> entries = m.shards;
  const CompactManifest c(std::move(m));
  EXPECT_EQ(c.name, "train");
  EXPECT_EQ(c.format, DatasetFormat::kRaw);
  EXPECT_EQ(c.tool_version, "9.9.9");
  EXPECT_EQ(c.options_json, R"({"keys":"index"})");
  EXPECT_EQ(c.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(c.samples, 7u);
  EXPECT_EQ(c.bytes, 99u);
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(c.skipped[0].reason, "truncated");
  EXPECT_EQ(c.empty_classes, (std::vector<std::string>{"eel"}));
  EXPECT_TRUE(c.wids_shard_list);
  // Only shard 2 has fields (VariedEntries).
  EXPECT_EQ(c.field_counts, (std::map<std::string, uint64_t>{{"", 0}, {"seg.png", uint64_t(1) << 40}, {"txt", 3}}));
  ASSERT_EQ(c.shards.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) ExpectSameEntry(entries[i], c.shards.entry(i));
}

// Each format's reader keeps the entries its manifest lists, read back here by ReadManifest.
class ReaderShardTable : public testing::DatasetTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ReaderShardTable, EveryEntryIsTheManifests) {
  MakeTree(3, 7);
  for (int i = 0; i < 7; i += 2)
    testing::WriteFile(src() + "/c1/img" + std::to_string(i) + ".txt", "caption " + std::to_string(i));
  PackOptions o = QuietOptions();
  o.format = testing::FormatNamed(GetParam());
  o.samples_per_shard = 4;
  o.keep_size = o.format == DatasetFormat::kRaw;
  PackResult r;
  const Status packed = PackTo(out(), o, &r);
  ASSERT_TRUE(packed.ok()) << packed.ToString();
  Manifest m;
  ASSERT_TRUE(ReadManifest(Env::Default(), out(), &m).ok());
  std::map<std::string, uint64_t> fields;
  for (const ShardEntry& s : m.shards) {
    for (const auto& [name, count] : s.fields) fields[name] += count;
  }
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out(), nullptr, &reader).ok());
  const CompactManifest& c = reader->manifest();
  EXPECT_EQ(c.samples, 21u);
  EXPECT_EQ(c.classes, m.classes);
  EXPECT_EQ(c.options_json, m.options_json);
  EXPECT_EQ(c.field_counts, fields);
  EXPECT_EQ(c.field_counts.count("txt"), 1u);
  ASSERT_EQ(c.shards.size(), m.shards.size());
  for (size_t i = 0; i < m.shards.size(); ++i) {
    SCOPED_TRACE(m.shards[i].file);
    ExpectSameEntry(m.shards[i], c.shards.entry(i));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ReaderShardTable, ::testing::Values("wds", "lmdb", "raw"));

}  // namespace
}  // namespace shardpack
