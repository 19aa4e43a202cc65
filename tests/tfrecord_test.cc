// TFRecord's pieces (issue 62): CRC-32C against its published check value, the framing reader and
// the tf.train.Example parser on bytes encoded here by hand from the protobuf wire format (the
// whole path, from files the tfrecord package reads too, is python/tests/test_tfrecord.py).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "formats/tfrecord/tf_example.h"
#include "formats/tfrecord/tfrecord_file.h"
#include "ground/crc32c.h"

namespace shardpack {
namespace {

TEST(Crc32c, GivesThePublishedCheckValueAndTheMaskTfRecordStores) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);  // the CRC catalogue's check value of CRC-32/ISCSI
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32cPortable("123456789"), 0xE3069283u);
  // The instruction's path and the table's agree at every length and alignment.
  std::string bytes;
  for (int i = 0; i < 300; ++i) bytes += char(i * 131 + 7);
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= bytes.size(); n += 17) {
      ASSERT_EQ(Crc32c(std::string_view(bytes).substr(start, n)),
                Crc32cPortable(std::string_view(bytes).substr(start, n)))
          << start << " " << n;
    }
  }
  // rotate right 15 bits, add 0xa282ead8: worked by hand (python3 -c) from the check value.
  EXPECT_EQ(MaskCrc32c(0xE3069283u), 0xC78AB0E5u);
}

std::string Le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += char((v >> (8 * i)) & 0xff);
  return s;
}

std::string Frame(const std::string& data) {
  const std::string length = Le(data.size(), 8);
  return length + Le(MaskCrc32c(Crc32c(length)), 4) + data + Le(MaskCrc32c(Crc32c(data)), 4);
}

// Length-delimited field `field` holding `body` (lengths under 128: one varint byte).
std::string Field(int field, const std::string& body) {
  return std::string(1, char(field << 3 | 2)) + char(body.size()) + body;
}

// An Example of features "img" (bytes "ab"), "n" (int64 packed 1, 300) and "x" (float 0.5, unpacked).
std::string HandMadeExample() {
  const std::string bytes_list = Field(1, "ab");
  const std::string int64_list = Field(1, std::string("\x01\xac\x02", 3));    // 1, 300 as varints
  const std::string float_list = std::string("\x0d", 1) + Le(0x3f000000, 4);  // field 1, wire 5: 0.5f
  const std::string img = Field(1, "img") + Field(2, Field(1, bytes_list));
  const std::string n = Field(1, "n") + Field(2, Field(3, int64_list));
  const std::string x = Field(1, "x") + Field(2, Field(2, float_list));
  return Field(1, Field(1, img) + Field(1, n) + Field(1, x));
}

TEST(TfExample, ParsesBytesInt64AndFloatListsPackedOrNot) {
  std::map<std::string, TfFeature> f;
  std::string why;
  const std::string example = HandMadeExample();  // (bytes values are views into it)
  ASSERT_TRUE(ParseTfExample(example, &f, &why)) << why;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f["img"].kind, TfFeature::Kind::kBytes);
  EXPECT_EQ(f["img"].bytes, std::vector<std::string_view>{"ab"});
  EXPECT_EQ(f["n"].kind, TfFeature::Kind::kInt64);
  EXPECT_EQ(f["n"].ints, (std::vector<int64_t>{1, 300}));
  EXPECT_EQ(f["x"].kind, TfFeature::Kind::kFloat);
  EXPECT_EQ(f["x"].floats, std::vector<float>{0.5f});
}

TEST(TfExample, MalformedBytesSayWhatIsWrong) {
  std::map<std::string, TfFeature> f;
  std::string why;
  const std::string good = HandMadeExample();
  EXPECT_FALSE(ParseTfExample(good.substr(0, good.size() - 3), &f, &why));
  EXPECT_EQ(why, "a length of " + std::to_string(good.size() - 2) + " runs past the end");
  EXPECT_FALSE(ParseTfExample(std::string("\x0b", 1), &f, &why));  // field 1, wire type 3
  EXPECT_EQ(why, "Example.features has the wrong wire type");
  EXPECT_FALSE(ParseTfExample(std::string(11, '\xff'), &f, &why));
  EXPECT_EQ(why, "a varint is longer than 10 bytes");
}

TEST(TfRecordReader, ReadsRecordsAndNamesADamagedOneByFileRecordAndOffset) {
  const std::string a = Frame("first"), b = Frame("second");
  std::string file = a + b + Frame("third");
  file[a.size() + 12 + 2] ^= 1;  // a byte of "second"
  TfRecordReader reader(file, "f.tfrecord");
  std::string_view record;
  std::string damaged;
  bool done = false;
  ASSERT_TRUE(reader.Next(&record, &damaged, &done).ok());
  EXPECT_EQ(record, "first");
  EXPECT_EQ(damaged, "");
  ASSERT_TRUE(reader.Next(&record, &damaged, &done).ok());
  EXPECT_EQ(damaged,
            "f.tfrecord: record 1 at byte " + std::to_string(a.size()) + ": its data's CRC-32C does not match");
  ASSERT_TRUE(reader.Next(&record, &damaged, &done).ok());
  EXPECT_EQ(record, "third");
  ASSERT_TRUE(reader.Next(&record, &damaged, &done).ok());
  EXPECT_TRUE(done);
  // A length whose CRC fails loses the framing: an error, not a guess.
  std::string bad_length = Frame("x");
  bad_length[0] = 9;
  TfRecordReader broken(bad_length, "g.tfrecord");
  const Status s = broken.Next(&record, &damaged, &done);
  EXPECT_EQ(s.message(),
            "g.tfrecord: record 0 at byte 0: its length's CRC-32C does not match (damaged, or not a TFRecord file)");
  EXPECT_TRUE(LooksLikeTfRecord(file));
  EXPECT_FALSE(LooksLikeTfRecord(bad_length));
}

}  // namespace
}  // namespace shardpack
