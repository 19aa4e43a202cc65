// The raw format (format "raw", version 1): pre-decoded uint8 RGB pixels that numpy memory-maps.
// Normative description: docs/formats/raw.md.
//
// Fixed size (--crop): "<prefix>-NNNNNN.npy" is an .npy file of shape (N, H, W, 3), dtype uint8.
// Variable size (--keep-size): the .npy is 1-D uint8 holding the images back to back, with
// "<stem>.offsets.npy" (int64, N+1 byte offsets into it) and "<stem>.shapes.npy" (int32, (N, 3)).
// Both: "<stem>.labels.npy" (int32, N), "<stem>.keys.txt" (one key a line), and the sample table.
// Every .npy written here has a header of exactly kNpyHeaderBytes bytes, so pixel data starts at
// that offset.
// Compressed (--compress zstd): the shard is "<stem>.zst", the pixel data (no header) cut into
// chunks of chunk_samples images, each an independent zstd frame; "<stem>.chunks.npy" (int64,
// C+1) holds the frames' byte offsets. Sample-table offsets refer to the decompressed data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

inline constexpr uint64_t kNpyHeaderBytes = 128;

// A version 1.0 .npy header for a C-order array, padded to kNpyHeaderBytes. descr: "|u1", "<i4", "<i8".
std::string NpyHeader(const std::string& descr, const std::vector<uint64_t>& shape);

struct NpyInfo {
  std::string descr;
  std::vector<uint64_t> shape;
  bool fortran_order = false;
  uint64_t data_offset = 0;
};
// Parses the header at the start of `bytes` (any .npy v1/v2 header, not only ours).
Status ParseNpyHeader(std::string_view bytes, NpyInfo* info);

// The chunk index of a compressed shard ("<stem>.chunks.npy"): a 1-D int64 .npy of byte offsets,
// each within [0, shard_bytes] and none below the one before. DataLoss saying what is wrong (the
// caller names the file) otherwise: readers take frame positions from it.
Status ParseRawChunkIndex(std::string_view npy, uint64_t shard_bytes, std::vector<int64_t>* offsets);

// Little-endian array bodies.
std::string NpyInt32Body(const std::vector<int32_t>& values);
std::string NpyInt64Body(const std::vector<int64_t>& values);

// File names derived from a shard's "<stem>.npy".
std::string RawShardFileName(const std::string& prefix, uint64_t index, bool compressed = false);
std::string RawSideFileName(const std::string& shard_file, const std::string& suffix);  // e.g. ".labels.npy"

// Label masks (image fields such as "seg.png"): "<stem>.<field>.npy" holds a uint8 slot per sample
// (zeros where the sample has none), laid out as the shard's images with one channel: (N, H, W), or
// 1-D for --keep-size with sample i's mask at its image's pixel-data offset / 3. Beside it
// "<stem>.<field>.present.npy", uint8 (N,): 1 where the sample has that mask.
std::string RawMaskFileName(const std::string& shard_file, const std::string& field);
std::string RawMaskPresenceFileName(const std::string& shard_file, const std::string& field);
// Which of those `side_file` of `shard_file` is, and of which field (*field; empty for kNone).
enum class RawMaskFile { kNone, kArray, kPresence };
RawMaskFile ParseRawMaskFileName(const std::string& shard_file, const std::string& side_file, std::string* field);

}  // namespace shardpack
