// LitData's in-file zstd ("batch" compression level, litdata 0.2.x streaming/framed_zstd.py): a
// chunk file of
//   "LDFZ01\0\0"; u16 version (1); u16 flags; u32 num_items; u32 frame_rows; u32 n_frames;
//   u32 offsets[num_items + 1]   (into the items' bytes laid end to end, from 0)
//   n_frames x {u32 first_item; u32 n_items; u64 compressed_off; u32 compressed_len; u32 uncompressed_len}
//   the zstd frames (each the bytes of its items)
// all little-endian. UnframeLitDataChunk turns it back into the classic chunk that every other
// LitData chunk is (u32 count, count + 1 offsets from the file's start, the items), which the MDS
// reader reads (mds_sample.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardpack/status.h"

namespace shardpack {

// Whether `file` starts with the framed chunk's magic.
bool IsLitDataFramedChunk(std::string_view file);

// The classic chunk of a framed one holding `items` (index.json's chunk_size) into *classic.
// DataLoss naming `path` and what is wrong: every count, offset and length is checked against the
// file and each other before anything is allocated or decompressed.
Status UnframeLitDataChunk(std::string_view file, uint64_t items, const std::string& path, std::string* classic);

}  // namespace shardpack
