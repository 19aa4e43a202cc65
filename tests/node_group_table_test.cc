// The node's table of sample groups in the cache folder (ops/read/node_group_table.h): made once,
// mapped after, and every file that cannot be trusted made again and said. The trailer is checked
// against XXH64 from the xxhash library itself and the layout the header documents.
#include "ops/read/node_group_table.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "support/forwarding_env.h"
#include "support/temp_dir.h"

namespace shardpack {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// A spec whose entries are `entries`, counting the calls that make them; entries below `limit` are valid.
struct CountingSpec {
  int makes = 0;
  GroupTableSpec spec;
  CountingSpec(const std::string& key, std::string entries, uint8_t limit = 5) {
    spec.key = key;
    spec.entry_bytes = 1;
    spec.valid = [limit](std::string_view e) {
      for (const char c : e) {
        if (uint8_t(c) >= limit) return false;
      }
      return true;
    };
    spec.make = [this, entries](std::string* out) {
      ++makes;
      *out = entries;
      return Status::OK();
    };
  }
};

std::string Hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, v);
  return text;
}

std::string TablePath(const TempDir& dir, const std::string& key) {
  return dir.Sub("cache/sample-groups/" + Hex(XXH64(key.data(), key.size(), 0)) + ".groups");
}

const std::string kEntries = std::string("\x00\x01\x02\x03\x04\x00\x01", 7);

TEST(NodeGroupTable, TheFirstOpenMakesTheFileAndTheNextMapsIt) {
  TempDir dir;
  CountingSpec counting("dataset a\nbuckets 64x64\n", kEntries);
  NodeGroupTable first;
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, counting.spec, &first).ok());
  EXPECT_EQ(first.origin, GroupTableOrigin::kMade);
  EXPECT_EQ(first.entries, kEntries);
  EXPECT_EQ(first.note, "");
  // The file: the entries, then the trailer line the header documents.
  const std::string key = counting.spec.key;
  const std::string trailer = "SPGROUPS1 " + Hex(7) + " 1 " + Hex(XXH64(kEntries.data(), 7, 0)) + " " +
                              Hex(XXH64(key.data(), key.size(), 0)) + "\n";
  EXPECT_EQ(trailer.size(), kGroupTableTrailerBytes);
  EXPECT_EQ(ReadFile(TablePath(dir, key)), kEntries + trailer);
  struct stat st;
  ASSERT_EQ(::stat(TablePath(dir, key).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);  // private, as every cache file

  NodeGroupTable second;
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, counting.spec, &second).ok());
  EXPECT_EQ(second.origin, GroupTableOrigin::kMapped);
  EXPECT_EQ(second.entries, kEntries);
  EXPECT_EQ(counting.makes, 1);
  // A mapping, not a copy: the process maps the file (the kernel lists it), and the pages are the
  // page cache's, shared by every process on the node.
  EXPECT_NE(ReadFile("/proc/self/maps").find(TablePath(dir, key)), std::string::npos);

  CountingSpec other("dataset b\nbuckets 64x64\n", "\x01\x01");
  NodeGroupTable third;
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, other.spec, &third).ok());
  EXPECT_EQ(third.origin, GroupTableOrigin::kMade);  // another key: another file
  EXPECT_EQ(third.entries, "\x01\x01");
}

// Each way a file found there can be wrong, and what the table says of it ("PATH" stands for the
// file's path in `problem`).
void ExpectMadeAgain(const std::function<void(const std::string& path)>& spoil, const std::string& problem) {
  TempDir dir;
  CountingSpec counting("dataset a\nbuckets 64x64\n", kEntries);
  NodeGroupTable table;
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, counting.spec, &table).ok());
  table = NodeGroupTable();
  const std::string path = TablePath(dir, counting.spec.key);
  spoil(path);
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, counting.spec, &table).ok());
  EXPECT_EQ(table.origin, GroupTableOrigin::kMade);
  EXPECT_EQ(table.entries, kEntries);
  EXPECT_EQ(counting.makes, 2);
  std::string said = problem;
  if (said.find("PATH") != std::string::npos) said.replace(said.find("PATH"), 4, path);
  EXPECT_EQ(table.note, "the node's table of sample groups " + path + " " + said + ": made again");
  EXPECT_EQ(ReadFile(path).substr(0, kEntries.size()), kEntries);
}

TEST(NodeGroupTable, AChangedEntryIsMadeAgain) {
  ExpectMadeAgain(
      [](const std::string& path) {
        std::string bytes = ReadFile(path);
        bytes[3] = '\x02';  // still a valid bucket: only the checksum tells
        WriteFile(path, bytes);
      },
      "does not match its trailer (changed, cut short, or for another dataset)");
}

TEST(NodeGroupTable, AFileCutShortIsMadeAgain) {
  ExpectMadeAgain([](const std::string& path) { ::truncate(path.c_str(), 20); },
                  "is too short to hold a table (20 bytes)");
}

TEST(NodeGroupTable, AnEntryOutOfRangeIsMadeAgainEvenWithItsChecksum) {
  ExpectMadeAgain(
      [](const std::string& path) {
        const std::string forged = std::string("\x00\x09", 2);
        WriteFile(path, forged + GroupTableTrailer(forged, 1, "dataset a\nbuckets 64x64\n"));
      },
      "holds an entry out of range");
}

TEST(NodeGroupTable, ALinkIsNeverFollowedAndOnlyTheLinkIsRemoved) {
  TempDir elsewhere;
  const std::string target = elsewhere.Sub("planted");
  std::string good;
  ExpectMadeAgain(
      [&](const std::string& path) {
        good = ReadFile(path);
        WriteFile(target, good);  // a good table, but behind a link
        std::filesystem::remove(path);
        std::filesystem::create_symlink(target, path);
      },
      "cannot be read (cannot open PATH: Too many levels of symbolic links)");
  EXPECT_EQ(ReadFile(target), good);  // what the link pointed to is left alone
}

TEST(NodeGroupTable, AFileOthersCanWriteIsMadeAgain) {
  ExpectMadeAgain([](const std::string& path) { ::chmod(path.c_str(), 0666); }, "is writable by others than you");
  ExpectMadeAgain([](const std::string& path) { ::chmod(path.c_str(), 0620); }, "is writable by others than you");
}

TEST(NodeGroupTable, ATeamFolderKeepsATableForEachUserThatNoOneElseCanWrite) {
  TempDir dir;
  CountingSpec counting("dataset a\nbuckets 64x64\n", kEntries);
  NodeGroupTable table;
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{true}, counting.spec, &table).ok());
  const std::string key = counting.spec.key;
  const std::string path = dir.Sub("cache/sample-groups/" + Hex(XXH64(key.data(), key.size(), 0)) + "-" +
                                   std::to_string(::geteuid()) + ".groups");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // group-readable, never group-writable
  EXPECT_EQ(ReadFile(path).substr(0, kEntries.size()), kEntries);
  ASSERT_TRUE(OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{true}, counting.spec, &table).ok());
  EXPECT_EQ(table.origin, GroupTableOrigin::kMapped);
}

// Renames into the cache folder fail: the table cannot be kept for the node.
class NoRenameEnv final : public testing::ForwardingEnv {
 public:
  Status RenameFile(const std::string& a, const std::string& b) override {
    return Status::IOError("cannot rename " + a + " to " + b + ": Read-only file system");
  }
};

TEST(NodeGroupTable, ATableThatCannotBeWrittenIsKeptByThisProcessAndSaid) {
  TempDir dir;
  NoRenameEnv env;
  CountingSpec counting("dataset a\nbuckets 64x64\n", kEntries);
  NodeGroupTable table;
  ASSERT_TRUE(OpenNodeGroupTable(&env, dir.Sub("cache"), CacheModes{}, counting.spec, &table).ok());
  EXPECT_EQ(table.origin, GroupTableOrigin::kMade);
  EXPECT_EQ(table.entries, kEntries);
  const std::string path = TablePath(dir, counting.spec.key);
  EXPECT_EQ(table.note, "cannot keep the node's table of sample groups in " + path + " (cannot rename " + path +
                            ".part-" + std::to_string(::getpid()) + " to " + path +
                            ": Read-only file system): this process keeps its own copy");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".part-" + std::to_string(::getpid())));  // nothing left half-made
}

TEST(NodeGroupTable, AFailedMakeLeavesNoFile) {
  TempDir dir;
  GroupTableSpec spec;
  spec.key = "k";
  spec.valid = [](std::string_view) { return true; };
  spec.make = [](std::string*) { return Status::InvalidArgument("sample 7 has no size"); };
  NodeGroupTable table;
  const Status s = OpenNodeGroupTable(Env::Default(), dir.Sub("cache"), CacheModes{}, spec, &table);
  EXPECT_EQ(s.ToString(), "invalid argument: sample 7 has no size");
  EXPECT_FALSE(std::filesystem::exists(TablePath(dir, "k")));
}

}  // namespace
}  // namespace shardpack
