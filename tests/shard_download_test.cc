// Streaming mode's download into memory (DownloadToMemory into a ShardBuffer, read through
// NewMemoryFile), through the HttpClient seam: a client that hands the body over in pieces and can
// cut an attempt short, as libcurl's client does when a connection drops (the real client is
// tested against nginx and a faulty server in tests/interop). The checksum a shard must match is
// libxxhash's over the bytes the test made, and what is kept must equal those bytes exactly.
#include "storage/shard_download.h"

#include <gtest/gtest.h>

#include <random>

#include "ground/checksum.h"
#include "ground/memory_file.h"

namespace shardpack {
namespace {

// Serves `body` in pieces of `piece` bytes. Attempt k of a GET stops after cut_after[k] bytes when
// that is set (a dropped connection); the next attempt calls rewind, as HttpClient::Get does, and
// sends from the offset it returns, or from 0 when ranges are refused. `flip`: the byte at that
// offset arrives damaged in every attempt.
class PiecewiseHttpClient final : public HttpClient {
 public:
  PiecewiseHttpClient(std::string body, size_t piece) : body_(std::move(body)), piece_(piece) {}
  std::vector<size_t> cut_after;
  bool ranges = true;
  size_t flip = std::string::npos;
  int attempts = 0;
  std::vector<uint64_t> offsets;  // where each attempt started

  Status Get(const std::string& url, const std::function<Status(std::string_view)>& sink,
             const Rewind& rewind) override {
    for (size_t k = 0;; ++k) {
      uint64_t offset = 0;
      if (k > 0) offset = rewind(/*from_start=*/!ranges);
      ++attempts;
      offsets.push_back(offset);
      const size_t stop = k < cut_after.size() ? offset + cut_after[k] : body_.size();
      for (size_t at = offset; at < stop; at += piece_) {
        std::string data = body_.substr(at, std::min(piece_, stop - at));
        if (flip >= at && flip < at + data.size()) data[flip - at] ^= 1;
        SHARDPACK_RETURN_IF_ERROR(sink(data));
      }
      if (stop >= body_.size()) return Status::OK();
      if (k == 3) return Status::IOError("GET " + url + ": cut short (gave up after 4 attempts)");
    }
  }
  Status Send(const HttpRequest& request, uint64_t, HttpResponse*) override {
    return Status::Unsupported("this test serves GETs only, not " + request.method);
  }

 private:
  const std::string body_;
  const size_t piece_;
};

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = char(rng());
  return s;
}

std::string Contents(const ShardBuffer& buffer) {
  std::string out;
  EXPECT_TRUE(buffer.ReadAll(&out).ok());
  return out;
}

TEST(DownloadToMemory, KeepsTheBodyInPiecesOfAnySize) {
  const std::string body = RandomBytes(3 * 4096 + 517, 1);  // pieces that end inside pages
  PiecewiseHttpClient http(body, 1000);
  ShardBuffer buffer;
  ASSERT_TRUE(DownloadToMemory(&http, "http://test/a.tar", ChecksumHex(Xxh64(body)), body.size(), &buffer).ok());
  EXPECT_EQ(buffer.size(), body.size());
  EXPECT_EQ(Contents(buffer), body);
  EXPECT_EQ(http.attempts, 1);
}

TEST(DownloadToMemory, ResumesAfterTheBytesKeptAndStillChecksTheWhole) {
  const std::string body = RandomBytes(20000, 2);
  PiecewiseHttpClient http(body, 3000);
  http.cut_after = {7000, 5000};  // two drops: the attempts start at 0, 7000 and 12000
  ShardBuffer buffer;
  ASSERT_TRUE(DownloadToMemory(&http, "http://test/a.tar", ChecksumHex(Xxh64(body)), body.size(), &buffer).ok());
  EXPECT_EQ(http.offsets, (std::vector<uint64_t>{0, 7000, 12000}));
  EXPECT_EQ(Contents(buffer), body);
}

TEST(DownloadToMemory, StartsOverWhenTheServerRefusesRanges) {
  const std::string body = RandomBytes(20000, 3);
  PiecewiseHttpClient http(body, 3000);
  http.cut_after = {7000};
  http.ranges = false;
  ShardBuffer buffer;
  ASSERT_TRUE(DownloadToMemory(&http, "http://test/a.tar", ChecksumHex(Xxh64(body)), body.size(), &buffer).ok());
  EXPECT_EQ(http.offsets, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(Contents(buffer), body);
}

TEST(DownloadToMemory, ADamagedByteIsFetchedAgainThenRefusedAndNothingIsKept) {
  const std::string body = RandomBytes(10000, 4);
  PiecewiseHttpClient http(body, 4096);
  http.flip = 5000;
  ShardBuffer buffer;
  const Status s = DownloadToMemory(&http, "http://test/a.tar", ChecksumHex(Xxh64(body)), body.size(), &buffer);
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message(),
            "http://test/a.tar does not match the checksum its manifest lists, in 3 downloads (the server holds a "
            "damaged or changed copy)");
  EXPECT_EQ(http.attempts, 3);
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(ShardBuffer, AReusedBufferHoldsOnlyTheNewBytes) {
  const std::string first = RandomBytes(50000, 5), second = RandomBytes(12345, 6);
  PiecewiseHttpClient http1(first, 8192), http2(second, 8192);
  auto buffer = std::make_shared<ShardBuffer>();
  ASSERT_TRUE(
      DownloadToMemory(&http1, "http://test/1.tar", ChecksumHex(Xxh64(first)), first.size(), buffer.get()).ok());
  ASSERT_TRUE(
      DownloadToMemory(&http2, "http://test/2.tar", ChecksumHex(Xxh64(second)), second.size(), buffer.get()).ok());
  EXPECT_EQ(buffer->size(), second.size());
  EXPECT_EQ(buffer->capacity(), first.size());  // the larger file's pages are kept for the next
  EXPECT_EQ(Contents(*buffer), second);

  const std::unique_ptr<RandomAccessFile> file = NewMemoryFile(buffer, "http://test/2.tar");
  std::string part(100, '\0');
  ASSERT_TRUE(file->Read(12245, 100, part.data()).ok());
  EXPECT_EQ(part, second.substr(12245));
  // The bytes of the first file past the second's end are not the second file's.
  const Status past = file->Read(12300, 100, part.data());
  EXPECT_EQ(past.code(), Status::Code::kDataLoss);
  EXPECT_EQ(past.message(), "http://test/2.tar: 100 bytes at offset 12300 lie past its end (12345 bytes)");
}

}  // namespace
}  // namespace shardpack
