#include "ground/range_checksums.h"

#include <algorithm>

#include "ground/checksum.h"

namespace shardpack {

bool CheckShardFileSize(Env* env, const std::string& path, uint64_t expected_bytes,
                        const std::function<void(const std::string&, const std::string&)>& problem) {
  uint64_t size = 0;
  if (!env->GetFileSize(path, &size).ok()) {
    problem("", "shard file is missing");
    return false;
  }
  if (size != expected_bytes) {
    problem("", "file is " + std::to_string(size) + " bytes, manifest says " + std::to_string(expected_bytes) +
                    (size < expected_bytes ? " (truncated)" : ""));
  }
  return true;
}

void CheckShardChecksums(Env* env, const std::string& path, const std::string& expected_xxh64,
                         const std::vector<SampleRecord>& records,
                         const std::function<void(const std::string&, const std::string&)>& problem,
                         uint64_t* bytes_read) {
  *bytes_read = 0;
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(path, &file);
  if (!s.ok()) {
    problem("", s.message());
    return;
  }
  std::vector<const SampleRecord*> ranges;
  for (const SampleRecord& r : records) ranges.push_back(&r);
  std::sort(ranges.begin(), ranges.end(),
            [](const SampleRecord* a, const SampleRecord* b) { return a->offset < b->offset; });
  StreamingXxh64 whole, sample;
  size_t next = 0;  // first range not yet finished
  uint64_t offset = 0;
  std::vector<char> buf(1 << 20);
  for (;;) {
    size_t n = 0;
    s = file->Read(buf.size(), buf.data(), &n);
    if (!s.ok()) {
      problem("", s.message());
      return;
    }
    if (n == 0) break;
    whole.Update(std::string_view(buf.data(), n));
    const uint64_t end = offset + n;
    while (next < ranges.size() && ranges[next]->offset < end) {
      const SampleRecord& r = *ranges[next];
      const uint64_t from = std::max(r.offset, offset);
      const uint64_t to = std::min(r.offset + r.size, end);
      if (from == r.offset) sample.Reset();
      if (to > from) sample.Update(std::string_view(buf.data() + (from - offset), to - from));
      if (r.offset + r.size > end) break;  // continues in the next piece
      if (sample.Digest() != r.xxh64) problem(r.key, "checksum mismatch: bytes of this sample changed");
      ++next;
    }
    offset = end;
  }
  *bytes_read = offset;
  for (; next < ranges.size(); ++next) problem(ranges[next]->key, "sample lies past the end of the file (truncated)");
  if (ChecksumHex(whole.Digest()) != expected_xxh64) {
    problem("", "checksum mismatch: xxh64 " + ChecksumHex(whole.Digest()) + ", manifest says " + expected_xxh64);
  }
}

}  // namespace shardpack
