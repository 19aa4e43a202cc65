// CRC-32C (Castagnoli, the polynomial 0x1EDC6F41 reflected as 0x82F63B78), as TFRecord files and
// LevelDB logs checksum their records, and the "mask" they store it under. Debian ships no C++
// CRC-32C library in the archive this project builds from, and this is eight lines of table code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shardpack {

// The CRC-32C of `data` (the standard one: "123456789" gives 0xE3069283).
uint32_t Crc32c(std::string_view data);
// The same by a table, a byte at a time: what Crc32c computes on a machine without SSE4.2 (x86-64
// machines with it take the crc32 instruction, 10 times as fast); tests compare the two.
uint32_t Crc32cPortable(std::string_view data);

// TFRecord's (and LevelDB's) masked form: a CRC of data that holds CRCs is itself a poor CRC, so
// the stored value is rotated right by 15 bits and offset by 0xa282ead8.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace shardpack
