// HttpRangeFile: a file at a URL read a range at a time (HTTP range requests, RFC 9110 §14), for
// reading a remote dataset at random without a cache folder (issue 39). A cache downloads shards
// whole: the first batch of a global shuffle over a dataset of 100,000 shards reads one sample from
// each of 256 shards, and fetching those shards whole took 199 s on loopback (12 GB); asking for
// the sample's bytes alone costs one request each.
//
// Everything the server answers is checked before a byte is used: the status must be 206 (a 200
// means it ignored the range and sends the whole file), Content-Range must name exactly the
// bytes asked for and the file's size known when it was opened, and the body must be that long.
// A file replaced on the server by one of another size is noticed at its next read; one changed in
// place to the same size is not (as a local file would not be: `shardpack verify` checks shards).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "shardpack/status.h"
#include "storage/http/http_client.h"

namespace shardpack {

// Clients for the range reads of many files from many threads: a libcurl handle serves one thread
// at a time, and keeps its connections, so a read takes an idle client (or makes one) and gives it
// back. At most as many clients as reads ever ran at once.
class HttpClientPool {
 public:
  using NewClient = std::function<std::unique_ptr<HttpClient>()>;
  explicit HttpClientPool(NewClient new_client) : new_client_(std::move(new_client)) {}

  // Runs `request` with a client no other thread uses meanwhile.
  Status With(const std::function<Status(HttpClient*)>& request);

 private:
  const NewClient new_client_;
  std::mutex mu_;
  std::vector<std::unique_ptr<HttpClient>> idle_;
};

// Whether a Content-Range value ("bytes 100-199/5000") names bytes [first, last] of a file of
// `size` bytes (any size when `size` is kUnknownSize); *total: the size it names.
constexpr uint64_t kUnknownSize = ~uint64_t(0);
bool ContentRangeIs(const std::string& value, uint64_t first, uint64_t last, uint64_t size, uint64_t* total);

// The file at `url` (messages name `name`, a path or the URL without credentials), of `size` bytes.
//
// With `size` kUnknownSize (a side file: the manifest lists its checksum, not its size), the first
// Size() or Read GETs the whole file (at most max_bytes) and keeps the body for the reads that
// follow, until one of them asks for less than the whole file; from then on reads go by range. A
// reader that opens a side file to check it whole and then reads one line of it (LineFile, for the
// sample asked for) so costs one request, not three (HEAD, the whole file, the line), and holds the
// body no longer than that.
std::unique_ptr<RandomAccessFile> NewHttpRangeFile(std::shared_ptr<HttpClientPool> clients, std::string url,
                                                   std::string name, uint64_t size, uint64_t max_bytes = 0);

}  // namespace shardpack
