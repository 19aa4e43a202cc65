// Every reader that wraps a format's reader (ops/read/forwarding_dataset_reader.h) answers every method
// of DatasetReader as the local reader of the same dataset does: the remote reader, streamed and
// cached (through the HttpClient seam), the loader's BufferedSampleReader and its MixtureReader,
// over wds and raw (whose masks are pixels, ReadMaskPixels).
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>

#include "ops/read/buffered_sample_reader.h"
#include "ops/read/mixture_reader.h"
#include "ops/read/remote_dataset_reader.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/folder_http_client.h"

namespace shardpack {
namespace {

constexpr int kSamples = 9;

class ReaderDecoratorTest : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // c0/img<i>.png with a caption (img<i>.txt) and a mask (img<i>.seg.png) beside each but the last,
  // packed into server/ds.
  void PackDataset() {
    for (int i = 0; i < kSamples; ++i) {
      const int w = 20 + i, h = 14 + 2 * i;
      const std::string stem = src() + "/c0/img" + std::to_string(i);
      testing::WriteFile(stem + ".png", testing::MakeImage(ImageFormat::kPng, w, h, uint64_t(i)));
      testing::WriteFile(stem + ".txt", "caption " + std::to_string(i));
      if (i + 1 < kSamples)
        testing::WriteFile(stem + ".seg.png", testing::EncodeGreyPng(std::string(size_t(w) * h, char(i)), w, h));
    }
    PackOptions po = QuietOptions();
    po.format = testing::FormatNamed(GetParam());
    po.keep_size = GetParam() == "raw";
    po.samples_per_shard = 4;
    PackResult r;
    const Status s = PackTo(out("server/ds"), po, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<DatasetReader> OpenRemote(const std::string& cache_dir) {
    RemoteOptions o;
    o.cache_dir = cache_dir;
    o.sequential = true;  // streaming needs it; a cache folder does not
    const std::string server = out("server");
    std::unique_ptr<DatasetReader> reader;
    Location location;
    EXPECT_TRUE(ParseLocation("http://test/ds", &location).ok());
    const Status s = OpenRemoteDatasetReader(
        location, Env::Default(), o,
        [this, server] { return std::make_unique<testing::FolderHttpClient>(server, &log_, &mu_); }, &reader);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return reader;
  }

  // Every method, every sample, against `local`.
  static void ExpectSameAnswers(const DatasetReader& local, DatasetReader* remote, bool plans = true) {
    ASSERT_EQ(remote->size(), local.size());
    EXPECT_EQ(remote->manifest().shards.size(), local.manifest().shards.size());
    EXPECT_EQ(remote->wants_read_plan(), plans);
    std::vector<ShardUse> plan;
    for (uint32_t s = 0; s < remote->manifest().shards.size(); ++s) plan.push_back({s, 4 * s, 4 * s + 3});
    remote->PlanReads(plan, 0);
    for (uint64_t i = 0; i < local.size(); ++i) {
      remote->ReachedPosition(i);
      ReadSample a, b;
      ASSERT_TRUE(local.Read(i, &a).ok());
      ASSERT_TRUE(remote->Read(i, &b).ok()) << i;
      EXPECT_EQ(b.key, a.key);
      EXPECT_EQ(b.label, a.label);
      EXPECT_EQ(b.format, a.format);
      EXPECT_EQ(b.encoded, a.encoded);
      EXPECT_EQ(b.pixels.rgb, a.pixels.rgb);
      EXPECT_EQ(b.pixels.width, a.pixels.width);
      std::string ja, jb;
      ASSERT_TRUE(local.ReadMetadata(i, &ja).ok());
      ASSERT_TRUE(remote->ReadMetadata(i, &jb).ok());
      EXPECT_EQ(jb, ja);
      std::vector<std::string> na, nb;
      ASSERT_TRUE(local.ReadFieldNames(i, &na).ok());
      ASSERT_TRUE(remote->ReadFieldNames(i, &nb).ok());
      EXPECT_EQ(nb, na);
      EXPECT_EQ(na, (std::vector<std::string>{"seg.png", "txt"}));  // the manifest's fields
      for (const char* field : {"txt", "seg.png"}) {
        std::string fa, fb;
        bool pa = false, pb = false;
        ASSERT_TRUE(local.ReadField(i, field, &fa, &pa).ok());
        ASSERT_TRUE(remote->ReadField(i, field, &fb, &pb).ok());
        EXPECT_EQ(pb, pa) << field << " " << i;
        EXPECT_EQ(fb, fa) << field << " " << i;
        ASSERT_TRUE(local.ReadMaskPixels(i, field, &fa, &pa).ok());
        ASSERT_TRUE(remote->ReadMaskPixels(i, field, &fb, &pb).ok());
        EXPECT_EQ(pb, pa) << field << " " << i;
        EXPECT_EQ(fb, fa) << field << " " << i;
      }
    }
    ReadSample past;
    EXPECT_EQ(remote->Read(local.size(), &past).message(), local.Read(local.size(), &past).message());
  }

  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_P(ReaderDecoratorTest, TheRemoteReaderAnswersEveryMethodAsTheLocalOne) {
  PackDataset();
  std::unique_ptr<DatasetReader> local;
  ASSERT_TRUE(DatasetReader::Open(out("server/ds"), nullptr, &local).ok());
  if (GetParam() == "raw") {  // the point of ReadMaskPixels: raw keeps masks as pixels
    std::string pixels;
    bool present = false;
    ASSERT_TRUE(local->ReadMaskPixels(0, "seg.png", &pixels, &present).ok());
    ASSERT_TRUE(present);
    ASSERT_EQ(pixels, std::string(20 * 14, '\0'));
  }
  for (const std::string& cache : {std::string(), out("cache")}) {
    SCOPED_TRACE(cache.empty() ? "streamed" : "cached");
    std::unique_ptr<DatasetReader> remote = OpenRemote(cache);
    ASSERT_NE(remote, nullptr);
    ExpectSameAnswers(*local, remote.get());
  }
}

// BufferedSampleReader (the loader's, under the streaming shuffle over a network): samples kept in
// memory, and those not kept, answer as the reader below does; forgotten ones are read below again.
TEST_P(ReaderDecoratorTest, TheBufferedSampleReaderAnswersEveryMethodAsTheLocalOne) {
  PackDataset();
  std::unique_ptr<DatasetReader> local, below;
  ASSERT_TRUE(DatasetReader::Open(out("server/ds"), nullptr, &local).ok());
  ASSERT_TRUE(DatasetReader::Open(out("server/ds"), nullptr, &below).ok());
  BufferedSampleReader buffered(std::move(below), {"txt"}, "seg.png");
  for (uint64_t i = 0; i < local->size(); i += 2) buffered.Keep(i);  // half kept, half read below
  EXPECT_GT(buffered.kept_bytes(), 0u);
  ExpectSameAnswers(*local, &buffered, /*plans=*/false);
  for (uint64_t i = 0; i < local->size(); ++i) buffered.Forget(i);
  EXPECT_EQ(buffered.kept_bytes(), 0u);
  ExpectSameAnswers(*local, &buffered, /*plans=*/false);
}

// MixtureReader (the loader's over a mixture of datasets): with one source, every method answers
// as that source's reader does (with more, each source's samples follow the earlier sources').
TEST_P(ReaderDecoratorTest, TheMixtureReaderAnswersEveryMethodAsItsSource) {
  PackDataset();
  std::unique_ptr<DatasetReader> local;
  ASSERT_TRUE(DatasetReader::Open(out("server/ds"), nullptr, &local).ok());
  Mixture mixture;
  mixture.sources = {{out("server/ds"), 1.0, 0, 0}};
  std::unique_ptr<MixtureReader> mixed;
  const Status s = MixtureReader::Open(mixture, LoaderOptions(), &mixed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectSameAnswers(*local, mixed.get(), /*plans=*/false);
}

INSTANTIATE_TEST_SUITE_P(Formats, ReaderDecoratorTest, ::testing::Values("wds", "raw"));

}  // namespace
}  // namespace shardpack
