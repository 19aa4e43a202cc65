#include "formats/wds/tar_shard_writer.h"

#include <gtest/gtest.h>

#include "formats/wds/tar_format.h"
#include "formats/wds/tar_shard_reader.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

using testing::ReadFile;
using testing::TempDir;

TEST(UstarHeader, HasFixedFieldsAndValidChecksum) {
  std::string h = UstarHeader("000000001.jpg", 1234);
  ASSERT_EQ(h.size(), 512u);
  EXPECT_EQ(h.substr(0, 14), std::string("000000001.jpg\0", 14));
  EXPECT_EQ(h.substr(100, 8), std::string("0000444\0", 8));
  EXPECT_EQ(h.substr(124, 12), std::string("00000002322\0", 12));  // 1234 in octal
  EXPECT_EQ(h.substr(136, 12), std::string("07033241600\0", 12));  // 2000-01-01
  EXPECT_EQ(h[156], '0');
  EXPECT_EQ(h.substr(257, 8), std::string("ustar\0"
                                          "00",
                                          8));
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  EXPECT_EQ(std::stoul(h.substr(148, 6), nullptr, 8), sum);
}

TEST(TarShardWriter, WritesMembersThatLibarchiveReadsBack) {
  TempDir dir;
  const std::string path = dir.Sub("a.tar");
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewWritableFile(path, &file).ok());
  TarShardWriter w(std::move(file));
  uint64_t off1 = 0, off2 = 0;
  ASSERT_TRUE(w.AddMember("k.cls", "7", &off1).ok());
  ASSERT_TRUE(w.AddMember("k.jpg", std::string(513, 'x'), &off2).ok());
  ASSERT_TRUE(w.Finish(true).ok());
  EXPECT_EQ(off1, 512u);
  EXPECT_EQ(off2, 1536u);
  // 2 headers + 1 block + 2 blocks of data + 2 end blocks.
  EXPECT_EQ(w.size(), 512u * 7);
  EXPECT_EQ(ReadFile(path).size(), w.size());
  EXPECT_EQ(w.checksum(), Xxh64(ReadFile(path)));

  std::unique_ptr<TarShardReader> r;
  ASSERT_TRUE(TarShardReader::Open(Env::Default(), path, &r).ok());
  TarMember m;
  bool done = false;
  ASSERT_TRUE(r->Next(&m, &done).ok());
  EXPECT_EQ(m.name, "k.cls");
  EXPECT_EQ(m.header_offset, 0u);
  std::string data;
  ASSERT_TRUE(r->ReadData(10, &data).ok());
  EXPECT_EQ(data, "7");
  ASSERT_TRUE(r->Next(&m, &done).ok());
  EXPECT_EQ(m.name, "k.jpg");
  EXPECT_EQ(m.header_offset, 1024u);
  EXPECT_EQ(m.size, 513u);
  EXPECT_TRUE(m.regular);
  ASSERT_TRUE(r->Next(&m, &done).ok());
  EXPECT_TRUE(done);
}

TEST(TarShardWriter, RefusesNamesLongerThanUstarAllows) {
  TempDir dir;
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewWritableFile(dir.Sub("a.tar"), &file).ok());
  TarShardWriter w(std::move(file));
  uint64_t off;
  EXPECT_TRUE(w.AddMember(std::string(100, 'n'), "x", &off).ok());
  Status s = w.AddMember(std::string(101, 'n'), "x", &off);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
}

TEST(TarShardWriter, RangeChecksumCoversOneSample) {
  TempDir dir;
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewWritableFile(dir.Sub("a.tar"), &file).ok());
  TarShardWriter w(std::move(file));
  uint64_t off;
  ASSERT_TRUE(w.AddMember("a.cls", "1", &off).ok());
  w.BeginRange();
  const uint64_t start = w.size();
  ASSERT_TRUE(w.AddMember("b.cls", "2", &off).ok());
  const uint64_t range = w.range_checksum();
  const uint64_t end = w.size();
  ASSERT_TRUE(w.Finish(false).ok());
  EXPECT_EQ(range, Xxh64(ReadFile(dir.Sub("a.tar")).substr(start, end - start)));
}

}  // namespace
}  // namespace shardpack
