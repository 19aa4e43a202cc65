// Little-endian integers in a buffer of bytes (TFRecord's framing, MDS shards, LitData chunks), read
// and written a byte at a time: no alignment and no host byte order assumed.
#pragma once

#include <cstdint>

namespace shardpack {

// The `bytes`-byte (1 to 8) unsigned integer at p.
inline uint64_t LoadLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}
inline uint32_t LoadLe32(const char* p) { return static_cast<uint32_t>(LoadLe(p, 4)); }
inline uint64_t LoadLe64(const char* p) { return LoadLe(p, 8); }

inline void StoreLe32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace shardpack
