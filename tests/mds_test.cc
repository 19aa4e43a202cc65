// MDS's pieces (issue 62): index.json's checks, a raw shard's header, a sample's columns and what
// shardpack makes of them, on bytes laid out here by hand from Streaming's writer
// (streaming/base/format/mds/writer.py: encode_joint_shard, encode_sample; encodings.py). The whole
// path, from datasets Streaming's own MDSWriter writes and its MDSReader reads, is
// python/tests/test_mds.py.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/mds/litdata_framed.h"
#include "formats/mds/litdata_index.h"
#include "formats/mds/mds_index.h"
#include "formats/mds/mds_sample.h"

namespace shardpack {
namespace {

std::string Le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += char((v >> (8 * i)) & 0xff);
  return s;
}

// A shard as encode_joint_shard writes it: count, offsets from the file's start, config, samples.
std::string Shard(const std::vector<std::string>& samples, const std::string& config = "{}") {
  uint64_t at = 4 + 4 * (samples.size() + 1) + config.size();
  std::string out = Le(samples.size(), 4);
  out += Le(at, 4);
  for (const std::string& s : samples) out += Le(at += s.size(), 4);
  out += config;
  for (const std::string& s : samples) out += s;
  return out;
}

const std::vector<MdsColumn> kColumns = {{"caption", "str", 0}, {"image", "jpeg", 0}, {"label", "int", 8}};

// encode_sample: a size for each variable column (caption, image), then every column's bytes.
std::string Sample(const std::string& caption, const std::string& image, int64_t label) {
  return Le(caption.size(), 4) + Le(image.size(), 4) + caption + image + Le(uint64_t(label), 8);
}

std::string Index(const std::string& shard_extra,
                  const std::string& columns = R"("column_names": ["caption", "image", "label"],
  "column_encodings": ["str", "jpeg", "int"], "column_sizes": [null, null, 8])") {
  return R"({"version": 2, "shards": [{"format": "mds", "samples": 2, "compression": null, "hashes": [],
    "raw_data": {"basename": "shard.00000.mds", "bytes": 100, "hashes": {}}, "zip_data": null, )" +
         columns + shard_extra + "}]}";
}

TEST(MdsIndex, ParsesWhatMdsWriterWrites) {
  MdsIndex index;
  ASSERT_TRUE(ParseMdsIndex(Index(""), "ix", &index).ok());
  ASSERT_EQ(index.shards.size(), 1u);
  EXPECT_EQ(index.samples, 2u);
  EXPECT_EQ(index.shards[0].raw.basename, "shard.00000.mds");
  EXPECT_EQ(index.shards[0].raw.bytes, 100u);
  EXPECT_FALSE(index.shards[0].compressed);
  ASSERT_EQ(index.columns.size(), 3u);
  EXPECT_EQ(index.columns[2].name, "label");
  EXPECT_EQ(index.columns[2].size, 8u);
  EXPECT_EQ(index.columns[0].size, 0u);
}

TEST(MdsIndex, RefusesWhatItCannotTrustNamingTheShardAndField) {
  MdsIndex index;
  EXPECT_EQ(ParseMdsIndex(R"({"version": 1, "shards": []})", "ix", &index).message(),
            "ix: index version 1; shardpack reads MDS index version 2 (mosaicml-streaming 0.4 and later)");
  std::string text = Index("");
  text.replace(text.find("shard.00000.mds"), 15, "../etc/passwd");
  EXPECT_EQ(ParseMdsIndex(text, "ix", &index).message(),
            "ix: shards[0].raw_data.basename is not a file name in the dataset folder");
  text = Index("");
  text.replace(text.find("\"bytes\": 100"), 12, "\"bytes\": 11");
  EXPECT_EQ(ParseMdsIndex(text, "ix", &index).message(),
            "ix: shards[0].raw_data.bytes 11 cannot hold the header of 2 samples");  // 4 + 4 * 3 = 16 at least
  text = Index("");
  text.replace(text.find("\"format\": \"mds\""), 15, "\"format\": \"json\"");
  EXPECT_EQ(
      ParseMdsIndex(text, "ix", &index).message(),
      "ix: shards[0] is a 'json' shard; shardpack reads MDS shards (MDSWriter), not Streaming's JSON or CSV ones");
  text = Index("");
  text.replace(text.find("\"zip_data\": null"), 16,
               R"("zip_data": {"basename": "shard.00000.mds.bz2", "bytes": 50}, "compression": "bz2:9")");
  text.replace(text.find("\"compression\": null, "), 21, "");
  EXPECT_EQ(ParseMdsIndex(text, "ix", &index).message(),
            "ix: shards[0] is compressed with bz2:9, which shardpack does not read (it reads zstd and uncompressed MDS "
            "shards): write the dataset again with MDSWriter(compression='zstd') or none");
  EXPECT_EQ(
      ParseMdsIndex(Index("", R"("column_names": ["a"], "column_encodings": ["str", "int"], "column_sizes": [null])"),
                    "ix", &index)
          .message(),
      "ix: shards[0]: column_names, column_encodings and column_sizes are not three lists of one length");
  // Two shards of different columns: one layout decodes every sample, so the index is refused.
  const std::string two = R"({"version": 2, "shards": [
    {"format": "mds", "samples": 1, "raw_data": {"basename": "a", "bytes": 20}, "column_names": ["image"],
     "column_encodings": ["jpeg"], "column_sizes": [null]},
    {"format": "mds", "samples": 1, "raw_data": {"basename": "b", "bytes": 20}, "column_names": ["image"],
     "column_encodings": ["png"], "column_sizes": [null]}]})";
  EXPECT_EQ(ParseMdsIndex(two, "ix", &index).message(),
            "ix: shards[1] has other columns than shards[0]; one dataset has one layout");
  EXPECT_TRUE(LooksLikeMdsIndex(two));
  EXPECT_FALSE(LooksLikeMdsIndex(R"({"chunks": [], "config": {}})"));  // LitData's
}

TEST(MdsShardView, ChecksTheHeaderAndGivesEachSample) {
  const std::string a = Sample("a cat", "JPEGDATA", 3), b = Sample("", "XY", 0);
  const std::string shard = Shard({a, b}, R"({"version": 2})");
  MdsShardView view;
  ASSERT_TRUE(MdsShardView::Open(shard, 2, "s", &view).ok());
  EXPECT_EQ(view.sample(0), a);
  EXPECT_EQ(view.sample(1), b);
  EXPECT_EQ(MdsShardView::Open(shard, 3, "s", &view).message(), "s: its header says 2 samples, index.json 3");
  EXPECT_EQ(MdsShardView::Open(shard.substr(0, 11), 2, "s", &view).message(),
            "s: 11 bytes cannot hold the header of 2 samples (index.json's count)");
  std::string bad = shard;
  bad.replace(8, 4, Le(shard.size() + 1, 4));  // offset 1 past the end
  EXPECT_EQ(MdsShardView::Open(bad, 2, "s", &view).message(),
            "s: offset 1 (" + std::to_string(shard.size() + 1) +
                ") is outside the shard's samples or before the one before it");
  bad = shard;
  bad.replace(4, 4, Le(3, 4));  // offset 0 inside the header
  EXPECT_EQ(MdsShardView::Open(bad, 2, "s", &view).message(),
            "s: offset 0 (3) is outside the shard's samples or before the one before it");
  EXPECT_TRUE(MdsSampleRangeValid(16, 16, 2, 16));
  EXPECT_FALSE(MdsSampleRangeValid(15, 16, 2, 100));  // inside the header of 4 * (2 + 2) bytes
  EXPECT_FALSE(MdsSampleRangeValid(20, 18, 2, 100));
  EXPECT_FALSE(MdsSampleRangeValid(20, 101, 2, 100));
}

TEST(MdsSample, SplitsColumnsBySizesAndNamesTheOneThatRunsOver) {
  std::vector<std::string_view> values;
  std::string why;
  const std::string s = Sample("a cat", "JPEGDATA", 3);
  ASSERT_TRUE(SplitMdsSample(s, kColumns, &values, &why)) << why;
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0], "a cat");
  EXPECT_EQ(values[1], "JPEGDATA");
  EXPECT_EQ(values[2], Le(3, 8));
  std::string over = s;
  over.replace(4, 4, Le(1000, 4));
  EXPECT_FALSE(SplitMdsSample(over, kColumns, &values, &why));
  EXPECT_EQ(why, "column image of 1000 bytes runs past the sample's end");
  EXPECT_FALSE(SplitMdsSample(s + "x", kColumns, &values, &why));
  EXPECT_EQ(why, "its columns hold " + std::to_string(s.size()) + " of its " + std::to_string(s.size() + 1) + " bytes");
  EXPECT_FALSE(SplitMdsSample("abc", kColumns, &values, &why));
  EXPECT_EQ(why, "its 3 bytes end inside the sizes of its columns");
}

TEST(MdsSample, ChoosesTheImageAndLabelColumnsAsDocumented) {
  MdsLayout layout;
  ASSERT_TRUE(ChooseMdsLayout(kColumns, "ix", &layout).ok());
  EXPECT_EQ(layout.image, 1);
  EXPECT_EQ(layout.label, 2);
  EXPECT_EQ(layout.fields, std::vector<int>{0});
  // A bytes column named as an image; two integer columns, one named "target".
  const std::vector<MdsColumn> other = {{"id", "int64", 8}, {"jpg", "bytes", 0}, {"target", "uint8", 1}};
  ASSERT_TRUE(ChooseMdsLayout(other, "ix", &layout).ok());
  EXPECT_EQ(layout.image, 1);
  EXPECT_FALSE(layout.image_is_pil);
  EXPECT_EQ(layout.label, 2);
  // Two integer columns, neither named as a label: none is guessed.
  const std::vector<MdsColumn> unnamed = {{"a", "int", 8}, {"b", "int", 8}, {"px", "pil", 0}};
  ASSERT_TRUE(ChooseMdsLayout(unnamed, "ix", &layout).ok());
  EXPECT_TRUE(layout.image_is_pil);
  EXPECT_EQ(layout.label, -1);
  EXPECT_EQ(layout.fields, (std::vector<int>{0, 1}));
  EXPECT_EQ(ChooseMdsLayout({{"data", "bytes", 0}, {"n", "int", 8}}, "ix", &layout).message(),
            "ix has no image column (its columns: data:bytes, n:int); shardpack takes the first jpeg, png or pil "
            "column, or a bytes column named image, img, jpg, jpeg, png or webp");
}

TEST(MdsSample, DecodesLabelsPilPixelsAndFields) {
  MdsLayout layout;
  ASSERT_TRUE(ChooseMdsLayout(kColumns, "ix", &layout).ok());
  std::vector<std::string_view> values;
  std::string why;
  const std::string s = Sample("caf\xc3\xa9", "JPEGDATA", 7);
  ASSERT_TRUE(SplitMdsSample(s, kColumns, &values, &why));
  MdsDecoded out;
  ASSERT_TRUE(DecodeMdsSample(values, kColumns, layout, true, 100, &out).ok());
  EXPECT_EQ(out.encoded, "JPEGDATA");
  EXPECT_EQ(out.label, 7);
  EXPECT_EQ(out.fields.dump(), R"({"caption":"café"})");
  const std::string negative = Sample("", "J", -1);
  ASSERT_TRUE(SplitMdsSample(negative, kColumns, &values, &why));
  EXPECT_EQ(DecodeMdsSample(values, kColumns, layout, true, 100, &out).message(),
            "its label is not a label from 0 to 2^31 - 1");
  // Fixed-size integers of every width, sign-extended: an int16 of 300 is a label, of -5 is not; a
  // uint64 past 2^63 stays a number in the fields.
  const std::vector<MdsColumn> ints = {{"big", "uint64", 8}, {"img", "png", 0}, {"label", "int16", 2}};
  ASSERT_TRUE(ChooseMdsLayout(ints, "ix", &layout).ok());
  const std::string big = Le(uint64_t(1) << 63 | 5, 8);
  ASSERT_TRUE(DecodeMdsSample({big, "P", Le(300, 2)}, ints, layout, true, 100, &out).ok());
  EXPECT_EQ(out.label, 300);
  EXPECT_EQ(out.fields.dump(), R"({"big":9223372036854775813})");
  EXPECT_EQ(DecodeMdsSample({big, "P", Le(uint16_t(-5), 2)}, ints, layout, true, 100, &out).message(),
            "its label is not a label from 0 to 2^31 - 1");
  // Fields of other encodings: bytes that are not UTF-8 as base64 with their encoding, float32,
  // json parsed; the one integer column (str_int, text) is the label.
  const std::vector<MdsColumn> columns = {
      {"blob", "bytes", 0}, {"f", "float32", 4}, {"j", "json", 0}, {"n", "str_int", 0}, {"px", "pil", 0}};
  ASSERT_TRUE(ChooseMdsLayout(columns, "ix", &layout).ok());
  const float f = 0.5f;
  std::string f_bytes(4, '\0');
  std::memcpy(f_bytes.data(), &f, 4);
  // pil: width 2, height 1, mode "RGBA", then 2 pixels of 4 bytes: alpha dropped.
  const std::string pil = Le(2, 4) + Le(1, 4) + Le(4, 4) + "RGBA" + std::string("\x01\x02\x03\xff\x04\x05\x06\x00", 8);
  ASSERT_TRUE(DecodeMdsSample(std::vector<std::string_view>{std::string_view("\xff\x00", 2), f_bytes,
                                                            R"({"a": [1, 2]})", "42", pil},
                              columns, layout, true, 100, &out)
                  .ok());
  EXPECT_EQ(out.pixels.width, 2u);
  EXPECT_EQ(out.pixels.height, 1u);
  EXPECT_EQ(out.pixels.rgb, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out.label, 42);
  EXPECT_EQ(out.fields.dump(), R"({"blob":{"base64":"/wA=","mds_encoding":"bytes"},"f":0.5,"j":{"a":[1,2]}})");
  // Grey repeated into RGB; a mode it does not read is named; pixels past the bound refused.
  const std::string grey = Le(2, 4) + Le(1, 4) + Le(1, 4) + "L" + std::string("\x09\x0a", 2);
  ASSERT_TRUE(DecodeMdsSample({"", f_bytes, "1", "1", grey}, columns, layout, false, 100, &out).ok());
  EXPECT_EQ(out.pixels.rgb, (std::vector<uint8_t>{9, 9, 9, 10, 10, 10}));
  const std::string cmyk = Le(1, 4) + Le(1, 4) + Le(4, 4) + "CMYK" + std::string(4, '\0');
  EXPECT_EQ(DecodeMdsSample({"", f_bytes, "1", "1", cmyk}, columns, layout, false, 100, &out).message(),
            "its pil image has mode CMYK; shardpack reads pil images of mode RGB, RGBA and L");
  EXPECT_EQ(DecodeMdsSample({"", f_bytes, "1", "1", grey}, columns, layout, false, 1, &out).message(),
            "its pil image is 2x1 (allowed: 1 to 1 pixels)");
  const std::string short_pil = Le(2, 4) + Le(1, 4) + Le(1, 4) + "L" + "\x09";
  EXPECT_EQ(DecodeMdsSample({"", f_bytes, "1", "1", short_pil}, columns, layout, false, 100, &out).message(),
            "its pil image of 2x1 L holds 1 bytes, not 2");
}

// LitData (litdata 0.2.x): its index's config names the leaves; its chunks are MDS's layout.
std::string LitDataIndex(const std::string& config_extra) {
  return R"({"chunks": [{"filename": "chunk-0-0.bin", "chunk_size": 2, "chunk_bytes": 60, "dim": null}],
    "config": {"data_format": ["jpeg", "int", "float", "image:png"], "item_loader": "PyTreeLoader",
    "data_spec": "[1, {\"type\": \"builtins.dict\", \"context\": \"[\\\"image\\\", \\\"label\\\", \\\"score\\\", \\\"mask\\\"]\", \"children_spec\": [{\"type\": null, \"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": []}, {\"type\": null, \"context\": null, \"children_spec\": []}]}]")" +
         config_extra + "}}";
}

TEST(LitDataIndex, NamesLeavesByTheSpecAndRefusesWhatItDoesNotRead) {
  MdsIndex index;
  ASSERT_TRUE(ParseLitDataIndex(LitDataIndex(""), "ix", &index).ok())
      << ParseLitDataIndex(LitDataIndex(""), "ix", &index).message();
  ASSERT_EQ(index.columns.size(), 4u);
  EXPECT_EQ(index.columns[0].name, "image");
  EXPECT_EQ(index.columns[2].name, "score");
  EXPECT_EQ(index.columns[2].encoding, "float64");  // LitData's float is a float64
  EXPECT_EQ(index.columns[3].encoding, "png");
  EXPECT_EQ(index.columns[1].size, 0u);  // LitData writes every leaf's size
  ASSERT_EQ(index.shards.size(), 1u);
  EXPECT_EQ(index.shards[0].raw.basename, "chunk-0-0.bin");
  EXPECT_EQ(index.shards[0].raw.bytes, 60u);
  EXPECT_FALSE(index.shards[0].compressed);
  EXPECT_TRUE(LooksLikeLitDataIndex(LitDataIndex("")));
  EXPECT_FALSE(LooksLikeMdsIndex(LitDataIndex("")));
  EXPECT_EQ(
      ParseLitDataIndex(LitDataIndex(R"(, "compression": "zstd", "compression_level": "sample")"), "ix", &index)
          .message(),
      "ix: its chunks are compressed with zstd at the 'sample' level; shardpack reads zstd at the chunk and batch "
      "levels and uncompressed chunks: optimize again with compression='zstd' (or None)");
  ASSERT_TRUE(
      ParseLitDataIndex(LitDataIndex(R"(, "compression": "zstd", "compression_level": "batch")"), "ix", &index).ok());
  EXPECT_EQ(index.shards[0].codec, MdsCodec::kLitDataFramedZstd);
  EXPECT_EQ(index.shards[0].zip.bytes, 60u);  // a framed chunk's chunk_bytes is its file's size
  ASSERT_TRUE(ParseLitDataIndex(LitDataIndex(R"(, "compression": "zstd")"), "ix", &index).ok());
  EXPECT_EQ(index.shards[0].codec, MdsCodec::kZstd);  // no level on read: the whole file
  EXPECT_EQ(index.shards[0].raw.bytes, 60u);          // ... and chunk_bytes its size before
  EXPECT_FALSE(index.shards[0].zip.size_known);
  EXPECT_EQ(ParseLitDataIndex(LitDataIndex(R"(, "encryption": {"level": "chunk"})"), "ix", &index).message(),
            "ix: its chunks are encrypted; decrypt the dataset with litdata first");
  std::string nested = LitDataIndex("");
  nested.replace(nested.rfind(R"({\"type\": null)"), 15, R"({\"type\": \"builtins.dict\")");
  EXPECT_EQ(ParseLitDataIndex(nested, "ix", &index).message(),
            "ix: its items are nested (\"builtins.dict\" holding containers); shardpack reads flat items: a dict, "
            "tuple or list of leaves such as {\"image\": ..., \"label\": ...}");
  std::string escaping = LitDataIndex("");
  escaping.replace(escaping.find("chunk-0-0.bin"), 13, "../chunk.bin");
  EXPECT_EQ(ParseLitDataIndex(escaping, "ix", &index).message(),
            "ix: chunks[0].filename is not a file name in the dataset folder");
}

// A framed chunk as litdata's pack_framed_zstd writes it, from items, `rows` items a frame.
std::string Framed(const std::vector<std::string>& items, size_t rows) {
  std::string logical = Le(0, 4), payload;
  uint64_t total = 0;
  for (const std::string& item : items) logical += Le(total += item.size(), 4);
  const size_t frames = (items.size() + rows - 1) / rows;
  std::string table;
  uint64_t at = 24 + logical.size() + 24 * frames;
  for (size_t f = 0; f < frames; ++f) {
    std::string raw;
    for (size_t i = f * rows; i < std::min(items.size(), (f + 1) * rows); ++i) raw += items[i];
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3));
    table += Le(f * rows, 4) + Le(std::min(items.size(), (f + 1) * rows) - f * rows, 4) + Le(at, 8) + Le(z.size(), 4) +
             Le(raw.size(), 4);
    at += z.size();
    payload += z;
  }
  return std::string("LDFZ01\0\0", 8) + Le(1, 2) + Le(0, 2) + Le(items.size(), 4) + Le(rows, 4) + Le(frames, 4) +
         logical + table + payload;
}

TEST(LitDataFramed, UnframesToTheClassicChunkAndChecksEveryTable) {
  const std::vector<std::string> items = {"first", "", "third item", "4"};
  const std::string framed = Framed(items, 3);
  ASSERT_TRUE(IsLitDataFramedChunk(framed));
  std::string classic;
  ASSERT_TRUE(UnframeLitDataChunk(framed, 4, "c", &classic).ok())
      << UnframeLitDataChunk(framed, 4, "c", &classic).message();
  EXPECT_EQ(classic, Shard(items, ""));  // what the chunk was before litdata framed it
  EXPECT_EQ(UnframeLitDataChunk(framed, 5, "c", &classic).message(),
            "c: its LitData zstd framing is damaged: it holds 4 items, index.json says 5");
  std::string bad = framed;
  bad[24 + 4 * 5 + 24 + 16] ^= 1;  // frame 1's compressed length
  EXPECT_EQ(UnframeLitDataChunk(bad, 4, "c", &classic).message().substr(0, 56),
            "c: its LitData zstd framing is damaged: frame 1 does not");
  bad = framed;
  bad[bad.size() - 2] ^= 0x55;  // inside frame 1's zstd data
  EXPECT_FALSE(UnframeLitDataChunk(bad, 4, "c", &classic).ok());
  EXPECT_EQ(UnframeLitDataChunk(framed.substr(0, 30), 4, "c", &classic).message(),
            "c: its LitData zstd framing is damaged: its tables run past the end");
}

}  // namespace
}  // namespace shardpack
