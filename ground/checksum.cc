#include "ground/checksum.h"

#include <xxhash.h>

#include <cstdio>
#include <vector>

#include "shardpack/env.h"

namespace shardpack {

uint64_t Xxh64(std::string_view data) { return XXH64(data.data(), data.size(), 0); }

std::string ChecksumHex(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

namespace {

// Each byte's value as a lower-case hex digit, or -1: one lookup a digit (a shard's sample table
// holds one checksum a sample, parsed whenever the shard is first read).
struct HexDigits {
  int8_t value[256];
  constexpr HexDigits() : value() {
    for (int c = 0; c < 256; ++c) value[c] = -1;
    for (int c = '0'; c <= '9'; ++c) value[c] = int8_t(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) value[c] = int8_t(c - 'a' + 10);
  }
};
constexpr HexDigits kHexDigits;

}  // namespace

bool ParseChecksumHex(std::string_view text, uint64_t* value) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  int bad = 0;
  for (const char c : text) {
    const int d = kHexDigits.value[static_cast<unsigned char>(c)];
    bad |= d;  // -1 sets the sign bit
    v = (v << 4) | static_cast<uint64_t>(d & 15);
  }
  if (bad < 0) return false;
  *value = v;
  return true;
}

Status ChecksumFile(Env* env, const std::string& path, uint64_t* xxh64, uint64_t* size) {
  std::unique_ptr<SequentialFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewSequentialFile(path, &file));
  StreamingXxh64 hash;
  std::vector<char> buf(1 << 20);
  *size = 0;
  for (;;) {
    size_t n = 0;
    SHARDPACK_RETURN_IF_ERROR(file->Read(buf.size(), buf.data(), &n));
    if (n == 0) break;
    hash.Update(std::string_view(buf.data(), n));
    *size += n;
  }
  *xxh64 = hash.Digest();
  return Status::OK();
}

struct StreamingXxh64::State {
  XXH64_state_t* s = XXH64_createState();
  ~State() { XXH64_freeState(s); }
};

StreamingXxh64::StreamingXxh64() : state_(std::make_unique<State>()) { Reset(); }
StreamingXxh64::~StreamingXxh64() = default;
void StreamingXxh64::Update(std::string_view data) { XXH64_update(state_->s, data.data(), data.size()); }
uint64_t StreamingXxh64::Digest() const { return XXH64_digest(state_->s); }
void StreamingXxh64::Reset() { XXH64_reset(state_->s, 0); }

}  // namespace shardpack
