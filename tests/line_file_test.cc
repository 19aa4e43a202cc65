// LineFile (ground/line_file.h): a checked side file read a line at a time. Every line comes back
// exactly as written, on either side of its marks, whatever the lengths; a file that is not the one
// the manifest describes is refused as ReadSideFile refuses it; what it keeps is its marks, not its
// text.
#include "ground/line_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ground/checksum.h"
#include "ground/memory_file.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

using testing::TempDir;
using testing::WriteFile;

// The side file entry a manifest would list for `contents`.
SideFile Describe(const std::string& file, const std::string& contents) {
  SideFile entry;
  entry.file = file;
  entry.xxh64 = ChecksumHex(Xxh64(contents));
  return entry;
}

// Lines of lengths 0 to 60 in a pattern that repeats every 61, so that marks fall mid-file.
std::vector<std::string> Lines(size_t n) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < n; ++i) lines.push_back(std::string((i * 7) % 61, char('a' + i % 26)));
  return lines;
}

TEST(LineFile, EveryLineReadsBackAsWritten) {
  TempDir dir;
  for (const size_t n : {size_t(0), size_t(1), LineFile::kLinesPerMark, LineFile::kLinesPerMark + 1, size_t(100)}) {
    const std::vector<std::string> lines = Lines(n);
    std::string text = "#header\tcolumns\n";
    for (const std::string& line : lines) text += line + "\n";
    WriteFile(dir.Sub("t"), text);
    std::unique_ptr<LineFile> file;
    std::string header;
    ASSERT_TRUE(LineFile::Open(Env::Default(), dir.path(), Describe("t", text), &header, &file).ok()) << n;
    EXPECT_EQ(header, "#header\tcolumns");
    ASSERT_EQ(file->lines(), n);
    EXPECT_TRUE(file->ends_with_newline());
    std::string scratch;
    std::string_view line;
    for (size_t i = n; i-- > 0;) {  // backwards: each read stands alone
      ASSERT_TRUE(file->ReadLine(i, &scratch, &line).ok()) << i;
      EXPECT_EQ(line, lines[i]) << n << " lines, line " << i;
    }
    const Status past = file->ReadLine(n, &scratch, &line);
    EXPECT_EQ(past.message(), dir.Sub("t") + ": line " + std::to_string(n) + " asked for, it has " + std::to_string(n));
  }
}

TEST(LineFile, ALastLineWithoutANewlineCountsAndIsReported) {
  TempDir dir;
  const std::string text = "h\none\ntwo";
  WriteFile(dir.Sub("t"), text);
  std::unique_ptr<LineFile> file;
  std::string header;
  ASSERT_TRUE(LineFile::Open(Env::Default(), dir.path(), Describe("t", text), &header, &file).ok());
  EXPECT_EQ(file->lines(), 2u);
  EXPECT_FALSE(file->ends_with_newline());
  std::string scratch;
  std::string_view line;
  ASSERT_TRUE(file->ReadLine(1, &scratch, &line).ok());
  EXPECT_EQ(line, "two");
}

TEST(LineFile, AFileOtherThanTheManifestSaysIsRefusedNamingIt) {
  TempDir dir;
  WriteFile(dir.Sub("t"), "h\nchanged\n");
  std::unique_ptr<LineFile> file;
  std::string header;
  const Status s = LineFile::Open(Env::Default(), dir.path(), Describe("t", "h\noriginal\n"), &header, &file);
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message(), dir.Sub("t") +
                             " does not match the checksum the manifest lists (the file changed after pack; run "
                             "shardpack verify)");
}

// Checked when opened, then changed in place (the same file, other bytes): its lines are no longer
// where the marks say, which is an error, not a line from elsewhere.
TEST(LineFile, AFileChangedInPlaceAfterItsCheckIsAnError) {
  TempDir dir;
  std::string text = "h\n";
  for (const std::string& line : Lines(40)) text += line + "\n";
  WriteFile(dir.Sub("t"), text);
  std::unique_ptr<LineFile> file;
  std::string header;
  ASSERT_TRUE(LineFile::Open(Env::Default(), dir.path(), Describe("t", text), &header, &file).ok());
  {
    std::ofstream same(dir.Sub("t"), std::ios::binary | std::ios::in | std::ios::out);  // no truncation, same inode
    same << std::string(text.size(), 'x');
  }
  std::string scratch;
  std::string_view line;
  const Status s = file->ReadLine(20, &scratch, &line);
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message(), dir.Sub("t") +
                             " changed since it was checked: lines 16 to 31 read now differ from the file "
                             "opened (open the dataset again)");
}

// The same length, one label changed (what a server did between the whole-file GET and the range
// reads): every line of the changed block is refused, the other blocks still read. The code before
// returned the changed line.
TEST(LineFile, ALineChangedInPlaceToTheSameLengthIsAnError) {
  TempDir dir;
  std::string text = "h\n";
  for (int i = 0; i < 40; ++i) text += "k" + std::to_string(100 + i) + "\t" + std::to_string(i % 10) + "\n";
  WriteFile(dir.Sub("t"), text);
  std::unique_ptr<LineFile> file;
  std::string header;
  ASSERT_TRUE(LineFile::Open(Env::Default(), dir.path(), Describe("t", text), &header, &file).ok());
  const size_t at = text.find("k120\t0\n") + 5;  // line 20's label, 0
  {
    std::ofstream same(dir.Sub("t"), std::ios::binary | std::ios::in | std::ios::out);
    same.seekp(std::streamoff(at));
    same << '7';
  }
  std::string scratch;
  std::string_view line;
  for (size_t i : {16, 20, 31}) {
    const Status s = file->ReadLine(i, &scratch, &line);
    EXPECT_EQ(s.code(), Status::Code::kDataLoss) << i << ": " << line;
  }
  for (size_t i : {0, 15, 32, 39}) {
    ASSERT_TRUE(file->ReadLine(i, &scratch, &line).ok()) << i;
    EXPECT_EQ(line, "k" + std::to_string(100 + i) + "\t" + std::to_string(i % 10));
  }
}

// 10,000 lines of a sample table's width (55 bytes): the marks and their blocks' checksums, one of
// each in 16 lines (8 bytes each), not the 560 KB of text.
TEST(LineFile, KeepsItsMarksNotItsText) {
  TempDir dir;
  std::string text = "h\n";
  for (int i = 0; i < 10000; ++i) text += std::string(54, 'k') + "\n";
  WriteFile(dir.Sub("t"), text);
  std::unique_ptr<LineFile> file;
  std::string header;
  ASSERT_TRUE(LineFile::Open(Env::Default(), dir.path(), Describe("t", text), &header, &file).ok());
  const uint64_t marks = (2 * (10000 / LineFile::kLinesPerMark) + 1) * sizeof(uint64_t);  // 625 x 2, and the end
  EXPECT_GE(file->memory_bytes(), marks);
  EXPECT_LE(file->memory_bytes(), marks + 512);
}

// A file served from memory (a side file streamed over HTTP without a cache folder) is held by the
// LineFile, which counts its bytes, so that the reader's bound on what it keeps holds.
TEST(LineFile, AFileServedFromMemoryCountsItsBytes) {
  class MemoryServedEnv final : public testing::ForwardingEnv {
   public:
    Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
      std::string bytes = testing::ReadFile(p);
      bytes.shrink_to_fit();  // (read in growing steps: its capacity is what a memory file holds)
      *f = NewMemoryFile(std::move(bytes), p);
      return Status::OK();
    }
  } env;
  TempDir dir;
  std::string text = "h\n";
  for (int i = 0; i < 1000; ++i) text += std::to_string(i) + "\n";
  WriteFile(dir.Sub("t"), text);
  std::unique_ptr<LineFile> file;
  std::string header;
  ASSERT_TRUE(LineFile::Open(&env, dir.path(), Describe("t", text), &header, &file).ok());
  EXPECT_GE(file->memory_bytes(), text.size());
  EXPECT_LE(file->memory_bytes(), text.size() + 2048);
  std::string scratch;
  std::string_view line;
  ASSERT_TRUE(file->ReadLine(999, &scratch, &line).ok());
  EXPECT_EQ(line, "999");
}

}  // namespace
}  // namespace shardpack
