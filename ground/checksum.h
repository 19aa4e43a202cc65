// Checksums: XXH64 (seed 0), written as 16 lower-case hex digits wherever it is stored.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

uint64_t Xxh64(std::string_view data);
std::string ChecksumHex(uint64_t value);
// Parses what ChecksumHex wrote; false on anything else.
bool ParseChecksumHex(std::string_view text, uint64_t* value);

class Env;
// XXH64 and size of a whole file, read in 1 MiB pieces through `env`.
Status ChecksumFile(Env* env, const std::string& path, uint64_t* xxh64, uint64_t* size);

// An XXH64 computed over data that arrives in pieces. Not thread-safe.
class StreamingXxh64 {
 public:
  StreamingXxh64();
  ~StreamingXxh64();
  StreamingXxh64(const StreamingXxh64&) = delete;
  StreamingXxh64& operator=(const StreamingXxh64&) = delete;

  void Update(std::string_view data);
  uint64_t Digest() const;
  void Reset();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardpack
