// Constants of the tar dialect shardpack writes: plain POSIX ustar, no PAX or GNU extensions, so
// that the strictest WebDataset readers (DALI's, wids') that read only the 100-byte name accept it.
// Layout of a member: a 512-byte header, the data, zero padding to a multiple of 512. An archive ends
// with two zero blocks. See docs/formats/wds.md.
#pragma once

#include <cstdint>

namespace shardpack::tar {

inline constexpr uint64_t kBlockSize = 512;
inline constexpr uint64_t kEndOfArchiveBytes = 2 * kBlockSize;
inline constexpr uint64_t kMaxNameLength = 100;
// The size field holds 11 octal digits.
inline constexpr uint64_t kMaxMemberSize = (uint64_t(1) << 33) - 1;

// Fixed metadata, so the same input always gives byte-identical shards.
inline constexpr char kFileMode[] = "0000444";
inline constexpr char kOwnerId[] = "0000000";
inline constexpr char kOwnerName[] = "root";
inline constexpr uint64_t kMtime = 946684800;  // 2000-01-01T00:00:00Z

// Header field offsets and sizes (POSIX.1-1988 ustar).
inline constexpr int kNameOffset = 0, kNameSize = 100;
inline constexpr int kModeOffset = 100;
inline constexpr int kUidOffset = 108;
inline constexpr int kGidOffset = 116;
inline constexpr int kSizeOffset = 124, kSizeSize = 12;
inline constexpr int kMtimeOffset = 136, kMtimeSize = 12;
inline constexpr int kChecksumOffset = 148, kChecksumSize = 8;
inline constexpr int kTypeOffset = 156;
inline constexpr int kMagicOffset = 257;  // "ustar\0" then version "00"
inline constexpr int kUnameOffset = 265;
inline constexpr int kGnameOffset = 297;
inline constexpr char kRegularFile = '0';

inline uint64_t PaddedSize(uint64_t size) { return (size + kBlockSize - 1) / kBlockSize * kBlockSize; }
// Bytes a member with `size` bytes of data occupies in the archive.
inline uint64_t MemberBytes(uint64_t size) { return kBlockSize + PaddedSize(size); }

}  // namespace shardpack::tar
